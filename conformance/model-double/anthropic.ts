/**
 * The model double's Anthropic Messages wire, for clients that speak only Anthropic's API
 * (Claude Code, so claude-agent-acp): the plan of play.ts as Messages content blocks.
 *
 * - `POST /v1/messages` with `stream: true` → SSE events (`event: <type>` + `data: {type, …}`):
 *   `message_start` (the message, empty, with input usage), then per block
 *   `content_block_start` / `content_block_delta` / `content_block_stop` — a run of `!think`
 *   lines is one `thinking` block (`thinking_delta` in word-sized chunks, then one
 *   `signature_delta`), a run of `!say` lines one `text` block (`text_delta`), each `!call` a
 *   `tool_use` block whose input arrives as `input_json_delta` pieces — then `message_delta`
 *   (`stop_reason` `tool_use` or `end_turn`, output usage) and `message_stop`. Thinking is
 *   played whether or not the request enabled it: the script, not the request, decides.
 * - `stream: false` (or absent) → the message object at once.
 * - `POST /v1/messages/count_tokens` → `{input_tokens}`; `GET /v1/models` (with an
 *   `anthropic-version` header) → the served models in Anthropic's list shape.
 * - Errors use Anthropic's shape `{"type": "error", "error": {"type", "message"}}`, the type
 *   from the status (table below). `!fail` before any output is that HTTP error; after output it
 *   is an `error` event, which ends the stream. The key is `x-api-key` (or a bearer token, as
 *   `ANTHROPIC_AUTH_TOKEN` clients send it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tokensFor, type Plan } from '../../server/providers/directives.ts'
import { parseMessagesRequest, type MessagesRequest } from './anthropic-input.ts'
import { charsRead, pieces, planOrRefuse, playAtOnce, segments } from './play.ts'
import {
  failure,
  HttpError,
  openSse,
  readBody,
  sendJson,
  sleep,
  unknownModel,
  type Wire,
  type WireContext,
} from './wire.ts'

/** Anthropic's error type for each status it uses. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
}
const errorType = (status: number): string =>
  ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
const errorBody = (e: HttpError) => ({ type: 'error', error: { type: errorType(e.status), message: e.message } })

type Block = Record<string, unknown> & { type: string }

const signature = (n: number, index: number): string => Buffer.from(`chimera-double:${n}:${index}`).toString('base64')

function usage(req: MessagesRequest, plan: Plan) {
  return {
    input_tokens: tokensFor(charsRead(req.messages)),
    output_tokens: tokensFor(plan.written),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  }
}

const toolUses = (plan: Plan, n: number): Block[] =>
  plan.calls.map((c, i) => ({ type: 'tool_use', id: `toolu_double_${n}_${i + 1}`, name: c.tool, input: c.args }))

const message = (
  n: number,
  req: MessagesRequest,
  content: Block[],
  stop: string | null,
  u: ReturnType<typeof usage>,
) => ({
  id: `msg_double_${n}`,
  type: 'message',
  role: 'assistant',
  model: req.model,
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: u,
})

async function stream(
  res: ServerResponse,
  req: MessagesRequest,
  plan: Plan,
  n: number,
  ctx: WireContext,
): Promise<void> {
  const u = usage(req, plan)
  let started = false
  let index = 0
  const send = (type: string, data: Record<string, unknown> = {}): void => {
    if (!started) {
      started = true
      openSse(res)
      send('message_start', { message: message(n, req, [], null, { ...u, output_tokens: 1 }) })
    }
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  }
  const block = (start: Block, deltas: Record<string, unknown>[]): void => {
    send('content_block_start', { index, content_block: start })
    for (const delta of deltas) send('content_block_delta', { index, delta })
    send('content_block_stop', { index })
    index++
  }
  for (const seg of segments(plan)) {
    if (ctx.signal.aborted) return
    if (seg.kind === 'sleep') {
      if (!(await sleep(seg.ms, ctx.signal))) return
    } else if (seg.kind === 'fail') {
      const err = failure(seg.message)
      if (!started) return sendJson(res, err.status, errorBody(err))
      send('error', errorBody(err))
      res.end()
      return
    } else if (seg.kind === 'text') {
      block(
        { type: 'text', text: '' },
        seg.chunks.map((text) => ({ type: 'text_delta', text })),
      )
    } else {
      const deltas = [
        ...seg.chunks.map((thinking) => ({ type: 'thinking_delta', thinking })),
        { type: 'signature_delta', signature: signature(n, index) },
      ]
      block({ type: 'thinking', thinking: '', signature: '' }, deltas)
    }
  }
  for (const use of toolUses(plan, n)) {
    const json = JSON.stringify(use.input)
    block(
      { ...use, input: {} },
      pieces(json, ctx.argChunk).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    )
  }
  send('message_delta', {
    delta: { stop_reason: plan.calls.length ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: u.output_tokens },
  })
  send('message_stop')
  res.end()
}

async function atOnce(
  res: ServerResponse,
  req: MessagesRequest,
  plan: Plan,
  n: number,
  signal: AbortSignal,
): Promise<void> {
  const played = await playAtOnce(plan, signal)
  if (!played) return
  if ('fail' in played) {
    const err = failure(played.fail)
    return sendJson(res, err.status, errorBody(err))
  }
  const content: Block[] = []
  for (const b of played.blocks)
    content.push(
      b.kind === 'text'
        ? { type: 'text', text: b.text }
        : { type: 'thinking', thinking: b.text, signature: signature(n, content.length) },
    )
  content.push(...toolUses(plan, n))
  sendJson(res, 200, message(n, req, content, plan.calls.length ? 'tool_use' : 'end_turn', usage(req, plan)))
}

const MESSAGES = '/v1/messages'
const COUNT = '/v1/messages/count_tokens'

async function handle(req: IncomingMessage, res: ServerResponse, url: URL, ctx: WireContext): Promise<void> {
  const path = url.pathname.replace(/\/+$/, '')
  if (path.startsWith('/v1/models')) {
    if (req.method !== 'GET') throw new HttpError(405, `${path} takes GET`, 'invalid_request_error')
    ctx.record({ models: true })
    const data = ctx.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' }))
    const one = path.slice('/v1/models/'.length)
    if (one) {
      const m = data.find((d) => d.id === one)
      if (!m) throw unknownModel(one)
      return sendJson(res, 200, m)
    }
    return sendJson(res, 200, {
      data,
      has_more: false,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    })
  }
  if (req.method !== 'POST') throw new HttpError(405, `${path} takes POST`, 'invalid_request_error')
  const request = parseMessagesRequest(await readBody(req), path === COUNT)
  ctx.record(request)
  if (!ctx.models.includes(request.model)) throw unknownModel(request.model)
  if (path === COUNT) return sendJson(res, 200, { input_tokens: tokensFor(charsRead(request.messages)) })
  const plan = planOrRefuse(request.messages)
  const n = ctx.next()
  if (request.stream) await stream(res, request, plan, n, ctx)
  else await atOnce(res, request, plan, n, ctx.signal)
}

export const anthropicWire: Wire = {
  name: 'anthropic',
  serves: (path, req) =>
    path === MESSAGES ||
    path === COUNT ||
    (path.startsWith('/v1/models') && req.headers['anthropic-version'] !== undefined),
  authorized: (req, _url, key) => req.headers['x-api-key'] === key || req.headers.authorization === `Bearer ${key}`,
  unauthorized: () => new HttpError(401, 'invalid x-api-key', 'authentication_error'),
  errorBody,
  handle,
}
