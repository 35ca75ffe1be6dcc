/**
 * The model double's Responses API wire (`POST /v1/responses`), for clients that speak only
 * that API (Codex). The same plan as the chat wire (play.ts), as Responses output items:
 *
 * - `stream: true` → SSE events (`event: <type>` + `data: {type, sequence_number, …}`):
 *   `response.created`, `response.in_progress`; a run of `!think` lines is one `reasoning`
 *   item (`response.reasoning_summary_part.added`, `…summary_text.delta` in word-sized
 *   chunks, `…summary_text.done`, `…summary_part.done`), a run of `!say` lines one assistant
 *   `message` item (`response.content_part.added`, `response.output_text.delta`,
 *   `…output_text.done`, `…content_part.done`), each framed by `response.output_item.added` /
 *   `response.output_item.done`; each `!call` a `function_call` item whose arguments arrive in
 *   `response.function_call_arguments.delta` pieces then `…arguments.done` — or a
 *   `custom_tool_call` (`input` = the call's `input` argument) when the client declared that
 *   tool `custom`; finally `response.completed` with every item and the usage. No `[DONE]`.
 * - `stream: false` → the response object at once.
 * - `!fail` before any output is an HTTP error in OpenAI's shape (as on the chat wire); after
 *   output it is `response.failed` (the response with `status: "failed"` and its `error`),
 *   which ends the stream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tokensFor, type Plan } from '../../server/providers/directives.ts'
import { charsRead, pieces, planOrRefuse, playAtOnce, segments } from './play.ts'
import { parseResponsesRequest, type ResponsesRequest } from './responses-input.ts'
import { openaiErrorBody, failure, readBody, sendJson, sleep, unknownModel, type WireContext } from './wire.ts'

export type ResponsesContext = WireContext

type Item = Record<string, unknown> & { id: string; type: string }

function usage(req: ResponsesRequest, plan: Plan) {
  const input = tokensFor(charsRead(req.messages))
  const output = tokensFor(plan.written)
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  }
}

function responseObject(
  id: string,
  req: ResponsesRequest,
  created: number,
  status: string,
  output: Item[],
  extra: Record<string, unknown> = {},
) {
  return {
    id,
    object: 'response',
    created_at: created,
    status,
    model: req.model,
    output,
    error: null,
    incomplete_details: null,
    usage: null,
    ...extra,
  }
}

/** The plan's calls as output items (function calls, or custom tool calls for tools declared custom). */
function callItems(req: ResponsesRequest, plan: Plan, n: number): Item[] {
  return plan.calls.map((c, i) => {
    const call_id = `call_${req.items}_${i + 1}`
    if (req.customTools.has(c.tool)) {
      const input = typeof c.args.input === 'string' ? c.args.input : JSON.stringify(c.args)
      return { id: `ctc_${n}_${i + 1}`, type: 'custom_tool_call', status: 'completed', call_id, name: c.tool, input }
    }
    return {
      id: `fc_${n}_${i + 1}`,
      type: 'function_call',
      status: 'completed',
      call_id,
      name: c.tool,
      arguments: JSON.stringify(c.args),
    }
  })
}

const messageItem = (id: string, text: string): Item => ({
  id,
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
})
const reasoningItem = (id: string, text: string): Item => ({
  id,
  type: 'reasoning',
  summary: [{ type: 'summary_text', text }],
  encrypted_content: null,
})

async function streamResponse(
  res: ServerResponse,
  req: ResponsesRequest,
  plan: Plan,
  n: number,
  ctx: ResponsesContext,
): Promise<void> {
  const id = `resp_double_${n}`
  const created = Math.floor(Date.now() / 1000)
  const output: Item[] = []
  let seq = 0
  let started = false
  const send = (type: string, data: Record<string, unknown>): void => {
    if (!started) {
      started = true
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      send('response.created', { response: responseObject(id, req, created, 'in_progress', []) })
      send('response.in_progress', { response: responseObject(id, req, created, 'in_progress', []) })
    }
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`)
  }
  for (const seg of segments(plan)) {
    if (ctx.signal.aborted) return
    if (seg.kind === 'sleep') {
      if (!(await sleep(seg.ms, ctx.signal))) return
      continue
    }
    if (seg.kind === 'fail') {
      const err = failure(seg.message, 'server_error')
      if (!started) return sendJson(res, err.status, openaiErrorBody(err))
      send('response.failed', {
        response: responseObject(id, req, created, 'failed', output, {
          error: { code: 'server_error', message: seg.message },
        }),
      })
      res.end()
      return
    }
    const output_index = output.length
    const text = seg.chunks.join('')
    if (seg.kind === 'text') {
      const item = messageItem(`msg_${n}_${output_index}`, text)
      const at = { item_id: item.id, output_index, content_index: 0 }
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } })
      send('response.content_part.added', {
        ...at,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      })
      for (const delta of seg.chunks) send('response.output_text.delta', { ...at, delta, logprobs: [] })
      send('response.output_text.done', { ...at, text, logprobs: [] })
      send('response.content_part.done', { ...at, part: { type: 'output_text', text, annotations: [], logprobs: [] } })
      send('response.output_item.done', { output_index, item })
      output.push(item)
    } else {
      const item = reasoningItem(`rs_${n}_${output_index}`, text)
      const at = { item_id: item.id, output_index, summary_index: 0 }
      send('response.output_item.added', { output_index, item: { ...item, summary: [] } })
      send('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } })
      for (const delta of seg.chunks) send('response.reasoning_summary_text.delta', { ...at, delta })
      send('response.reasoning_summary_text.done', { ...at, text })
      send('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } })
      send('response.output_item.done', { output_index, item })
      output.push(item)
    }
  }
  for (const item of callItems(req, plan, n)) {
    const output_index = output.length
    const custom = item.type === 'custom_tool_call'
    const full = (custom ? item.input : item.arguments) as string
    send('response.output_item.added', {
      output_index,
      item: { ...item, status: 'in_progress', [custom ? 'input' : 'arguments']: '' },
    })
    for (const delta of pieces(full, ctx.argChunk))
      send(custom ? 'response.custom_tool_call_input.delta' : 'response.function_call_arguments.delta', {
        item_id: item.id,
        output_index,
        delta,
      })
    if (custom) send('response.custom_tool_call_input.done', { item_id: item.id, output_index, input: full })
    else
      send('response.function_call_arguments.done', {
        item_id: item.id,
        output_index,
        name: item.name,
        arguments: full,
      })
    send('response.output_item.done', { output_index, item })
    output.push(item)
  }
  send('response.completed', {
    response: responseObject(id, req, created, 'completed', output, { usage: usage(req, plan) }),
  })
  res.end()
}

async function respondAtOnce(
  res: ServerResponse,
  req: ResponsesRequest,
  plan: Plan,
  n: number,
  signal: AbortSignal,
): Promise<void> {
  const played = await playAtOnce(plan, signal)
  if (!played) return
  if ('fail' in played) {
    const err = failure(played.fail, 'server_error')
    return sendJson(res, err.status, openaiErrorBody(err))
  }
  const output: Item[] = []
  for (const b of played.blocks)
    output.push(
      b.kind === 'text'
        ? messageItem(`msg_${n}_${output.length}`, b.text)
        : reasoningItem(`rs_${n}_${output.length}`, b.text),
    )
  output.push(...callItems(req, plan, n))
  sendJson(
    res,
    200,
    responseObject(`resp_double_${n}`, req, Math.floor(Date.now() / 1000), 'completed', output, {
      usage: usage(req, plan),
    }),
  )
}

/** Serves one `POST /v1/responses`; throws HttpError for a request it refuses. */
export async function serveResponses(req: IncomingMessage, res: ServerResponse, ctx: ResponsesContext): Promise<void> {
  const request = parseResponsesRequest(await readBody(req))
  ctx.record(request)
  if (!ctx.models.includes(request.model)) throw unknownModel(request.model)
  const plan = planOrRefuse(request.messages)
  const n = ctx.next()
  if (request.stream) await streamResponse(res, request, plan, n, ctx)
  else await respondAtOnce(res, request, plan, n, ctx.signal)
}
