/**
 * The model double's OpenAI wires: `POST /v1/chat/completions` (here), `POST /v1/responses`
 * (responses.ts) and `GET /v1/models`, behind one bearer key and OpenAI's error body.
 *
 * Chat completions: `stream: true` streams `chat.completion.chunk` SSE events
 * (`data: {...}` … `data: [DONE]`): `!say` as `content` deltas and `!think` as
 * `reasoning_content` deltas in word-sized chunks, `!call` as `tool_calls` deltas whose
 * arguments are split across chunks, the finish reason, and usage in a final chunk when
 * `stream_options.include_usage` is set; `stream: false` returns one `chat.completion` (usage
 * always included). `!fail` after output is an `{"error": …}` event that ends the stream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { wordChunks, type Plan } from '../../server/providers/directives.ts'
import { pieces, planOrRefuse, usageOf, type WireMessage } from './play.ts'
import { serveResponses } from './responses.ts'
import {
  badRequest,
  failure,
  HttpError,
  openaiErrorBody,
  openSse,
  parseObject,
  readBody,
  sendJson,
  sleep,
  unknownModel,
  type Wire,
  type WireContext,
} from './wire.ts'

interface ChatRequest {
  model: string
  messages: WireMessage[]
  stream: boolean
  includeUsage: boolean
}

function parseChatRequest(text: string): ChatRequest {
  const b = parseObject(text) as {
    model?: unknown
    messages?: unknown
    stream?: unknown
    stream_options?: { include_usage?: unknown }
  }
  if (typeof b.model !== 'string') throw badRequest("'model' is required and must be a string")
  if (
    !Array.isArray(b.messages) ||
    b.messages.some((m) => typeof m !== 'object' || m === null || typeof (m as { role?: unknown }).role !== 'string')
  ) {
    throw badRequest("'messages' must be an array of messages with a 'role'")
  }
  if (b.stream !== undefined && typeof b.stream !== 'boolean') throw badRequest("'stream' must be a boolean")
  return {
    model: b.model,
    messages: b.messages as WireMessage[],
    stream: b.stream === true,
    includeUsage: b.stream_options?.include_usage === true,
  }
}

const toolCallsOf = (plan: Plan, prefix: string) =>
  plan.calls.map((c, i) => ({ id: `${prefix}_${i + 1}`, name: c.tool, arguments: JSON.stringify(c.args) }))

async function streamCompletion(
  res: ServerResponse,
  req: ChatRequest,
  plan: Plan,
  ids: { id: string; callPrefix: string },
  signal: AbortSignal,
  argChunk: number,
): Promise<void> {
  const created = Math.floor(Date.now() / 1000)
  const base = { id: ids.id, object: 'chat.completion.chunk', created, model: req.model, system_fingerprint: null }
  let started = false
  const send = (data: unknown): void => {
    if (!started) {
      started = true
      openSse(res)
      send({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      })
    }
    res.write(`data: ${JSON.stringify(data)}\n\n`)
  }
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    send({ ...base, choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }] })
  for (const move of plan.moves) {
    if (signal.aborted) return
    switch (move.kind) {
      case 'text':
        for (const c of wordChunks(move.text)) delta({ content: c })
        break
      case 'reasoning':
        for (const c of wordChunks(move.text)) delta({ reasoning_content: c })
        break
      case 'sleep':
        if (!(await sleep(move.ms, signal))) return
        break
      case 'fail': {
        const err = failure(move.message)
        if (!started) return sendJson(res, err.status, openaiErrorBody(err))
        res.write(`data: ${JSON.stringify(openaiErrorBody(err))}\n\n`)
        res.end()
        return
      }
    }
  }
  const calls = toolCallsOf(plan, ids.callPrefix)
  calls.forEach((c, index) => {
    delta({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] })
    for (const p of pieces(c.arguments, argChunk)) delta({ tool_calls: [{ index, function: { arguments: p } }] })
  })
  delta({}, calls.length ? 'tool_calls' : 'stop')
  if (req.includeUsage) send({ ...base, choices: [], usage: usageOf(req.messages, plan) })
  res.write('data: [DONE]\n\n')
  res.end()
}

async function completeAtOnce(
  res: ServerResponse,
  req: ChatRequest,
  plan: Plan,
  ids: { id: string; callPrefix: string },
  signal: AbortSignal,
): Promise<void> {
  let text = ''
  let reasoning = ''
  for (const move of plan.moves) {
    if (move.kind === 'text') text += move.text
    else if (move.kind === 'reasoning') reasoning += move.text
    else if (move.kind === 'sleep') {
      if (!(await sleep(move.ms, signal))) return
    } else {
      const err = failure(move.message)
      return sendJson(res, err.status, openaiErrorBody(err))
    }
  }
  const calls = toolCallsOf(plan, ids.callPrefix)
  const message = {
    role: 'assistant',
    content: text || null,
    ...(reasoning ? { reasoning_content: reasoning } : {}),
    ...(calls.length
      ? {
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        }
      : {}),
  }
  sendJson(res, 200, {
    id: ids.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: req.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
    usage: usageOf(req.messages, plan),
  })
}

async function handle(req: IncomingMessage, res: ServerResponse, url: URL, ctx: WireContext): Promise<void> {
  const path = url.pathname.replace(/\/+$/, '')
  const method = req.method ?? 'GET'
  if (path === '/v1/models') {
    if (method !== 'GET') throw new HttpError(405, `${path} takes GET`, 'invalid_request_error')
    ctx.record({ models: true })
    return sendJson(res, 200, {
      object: 'list',
      data: ctx.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'chimera' })),
    })
  }
  if (method !== 'POST') throw new HttpError(405, `${path} takes POST`, 'invalid_request_error')
  if (path === '/v1/responses') return await serveResponses(req, res, ctx)
  const chat = parseChatRequest(await readBody(req))
  ctx.record(chat)
  if (!ctx.models.includes(chat.model)) throw unknownModel(chat.model)
  const plan = planOrRefuse(chat.messages)
  const ids = { id: `chatcmpl-double-${ctx.next()}`, callPrefix: `call_${chat.messages.length}` }
  if (chat.stream) await streamCompletion(res, chat, plan, ids, ctx.signal, ctx.argChunk)
  else await completeAtOnce(res, chat, plan, ids, ctx.signal)
}

const PATHS = new Set(['/v1/models', '/v1/chat/completions', '/v1/responses'])

export const openaiWire: Wire = {
  name: 'openai',
  serves: (path) => PATHS.has(path),
  authorized: (req, _url, key) => req.headers.authorization === `Bearer ${key}`,
  unauthorized: () => new HttpError(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
  errorBody: openaiErrorBody,
  handle,
}
