/**
 * The model double: an OpenAI-compatible HTTP server on loopback that plays the offline
 * model's directive language as real chat completions or Responses API answers (DESIGN §5;
 * docs/providers.md). Any implementation points its OpenAI-compatible provider at `<url>/v1`
 * and the same transcripts drive it. Hand-written on node:http (docs/decisions/0041-model-double-on-node-http.md): the
 * double must control the wire byte by byte — when headers go out, each SSE chunk, a failure
 * before or after the first byte.
 *
 * - `GET /v1/models` — the served model ids;
 * - `POST /v1/chat/completions` — `stream: true` streams `chat.completion.chunk` SSE events
 *   (`data: {...}` … `data: [DONE]`): `!say` as `content` deltas and `!think` as
 *   `reasoning_content` deltas in word-sized chunks, `!call` as `tool_calls` deltas whose
 *   arguments are split across chunks, the finish reason, and usage in a final chunk when
 *   `stream_options.include_usage` is set; `stream: false` returns one `chat.completion`
 *   (usage always included). `!sleep` waits (ended when the client goes away). `!fail` before
 *   anything was streamed is an HTTP error (500, or the status its message starts with, e.g.
 *   `!fail 429 slow down`, sent with `retry-after: 1`); after that it is an `{"error": …}`
 *   event that ends the stream.
 * - `POST /v1/responses` — the same plans on the Responses API wire (responses.ts), for
 *   clients that speak only that API (Codex): streamed `response.*` events or one response
 *   object; tool results are read back from `function_call_output` items.
 * - Errors use OpenAI's shape `{"error": {"message", "type", "param", "code"}}`: an unknown
 *   model is 404 `model_not_found`, a bad body 400, a missing or wrong key (when the double was
 *   started with one) 401.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { wordChunks, type Plan } from '../../server/providers/directives.ts'
import { planFor, pieces, usageOf, type WireMessage } from './play.ts'
import { serveResponses } from './responses.ts'
import { badRequest, errorBody, failStatus, HttpError, parseObject, readBody, sendJson, sleep } from './wire.ts'

export interface ModelDoubleOptions {
  host?: string
  /** 0 (default): any free port. */
  port?: number
  /** Model ids served (default `chimera-double`). */
  models?: readonly string[]
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string
  /** Characters per tool-call argument chunk (default 7). */
  argumentChunk?: number
}

export interface ModelDouble {
  /** Base URL, e.g. `http://127.0.0.1:41234/v1`. */
  url: string
  /** Requests served so far (by path), for tests. */
  readonly requests: { method: string; path: string; body?: unknown }[]
  close(): Promise<void>
}

export const DOUBLE_MODEL = 'chimera-double'

interface ChatRequest {
  model: string
  messages: WireMessage[]
  stream: boolean
  includeUsage: boolean
}

function parseChatRequest(text: string): ChatRequest {
  const b = parseObject(text) as { model?: unknown; messages?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } }
  if (typeof b.model !== 'string') throw badRequest("'model' is required and must be a string")
  if (!Array.isArray(b.messages) || b.messages.some((m) => typeof m !== 'object' || m === null || typeof (m as { role?: unknown }).role !== 'string')) {
    throw badRequest("'messages' must be an array of messages with a 'role'")
  }
  if (b.stream !== undefined && typeof b.stream !== 'boolean') throw badRequest("'stream' must be a boolean")
  return { model: b.model, messages: b.messages as WireMessage[], stream: b.stream === true, includeUsage: b.stream_options?.include_usage === true }
}

const toolCallsOf = (plan: Plan, prefix: string) => plan.calls.map((c, i) => ({ id: `${prefix}_${i + 1}`, name: c.tool, arguments: JSON.stringify(c.args) }))

async function streamCompletion(res: ServerResponse, req: ChatRequest, plan: Plan, ids: { id: string; callPrefix: string }, signal: AbortSignal, argChunk: number): Promise<void> {
  const created = Math.floor(Date.now() / 1000)
  const base = { id: ids.id, object: 'chat.completion.chunk', created, model: req.model, system_fingerprint: null }
  let started = false
  const send = (data: unknown): void => {
    if (!started) {
      started = true
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] })
    }
    res.write(`data: ${JSON.stringify(data)}\n\n`)
  }
  const delta = (d: Record<string, unknown>, finish: string | null = null) => send({ ...base, choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }] })
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
        const err = new HttpError(failStatus(move.message), move.message, 'server_error')
        if (!started) return sendJson(res, err.status, errorBody(err))
        res.write(`data: ${JSON.stringify(errorBody(err))}\n\n`)
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

async function completeAtOnce(res: ServerResponse, req: ChatRequest, plan: Plan, ids: { id: string; callPrefix: string }, signal: AbortSignal): Promise<void> {
  let text = ''
  let reasoning = ''
  for (const move of plan.moves) {
    if (move.kind === 'text') text += move.text
    else if (move.kind === 'reasoning') reasoning += move.text
    else if (move.kind === 'sleep') {
      if (!(await sleep(move.ms, signal))) return
    } else {
      const err = new HttpError(failStatus(move.message), move.message, 'server_error')
      return sendJson(res, err.status, errorBody(err))
    }
  }
  const calls = toolCallsOf(plan, ids.callPrefix)
  const message = {
    role: 'assistant',
    content: text || null,
    ...(reasoning ? { reasoning_content: reasoning } : {}),
    ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
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

export async function startModelDouble(opts: ModelDoubleOptions = {}): Promise<ModelDouble> {
  const models = opts.models ?? [DOUBLE_MODEL]
  const argChunk = Math.max(1, opts.argumentChunk ?? 7)
  const requests: ModelDouble['requests'] = []
  let counter = 0

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://double').pathname.replace(/\/+$/, '')
    const method = req.method ?? 'GET'
    const ac = new AbortController()
    res.on('close', () => ac.abort())
    try {
      if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        throw new HttpError(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key')
      }
      if (path === '/v1/models' && method === 'GET') {
        requests.push({ method, path })
        return sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'chimera' })) })
      }
      if (path !== '/v1/chat/completions' && path !== '/v1/responses') throw new HttpError(404, `no route for ${method} ${path || '/'}`, 'invalid_request_error', 'not_found')
      if (method !== 'POST') throw new HttpError(405, `${path} takes POST`, 'invalid_request_error')
      if (path === '/v1/responses') {
        return await serveResponses(req, res, { models, argChunk, signal: ac.signal, next: () => ++counter, record: (body) => requests.push({ method, path, body }) })
      }
      const chat = parseChatRequest(await readBody(req))
      requests.push({ method, path, body: chat })
      if (!models.includes(chat.model)) throw new HttpError(404, `The model \`${chat.model}\` does not exist.`, 'invalid_request_error', 'model_not_found')
      let plan: Plan
      try {
        plan = planFor(chat.messages)
      } catch (e) {
        throw new HttpError(400, (e as Error).message, 'invalid_request_error')
      }
      const n = ++counter
      const ids = { id: `chatcmpl-double-${n}`, callPrefix: `call_${chat.messages.length}` }
      if (chat.stream) await streamCompletion(res, chat, plan, ids, ac.signal, argChunk)
      else await completeAtOnce(res, chat, plan, ids, ac.signal)
    } catch (e) {
      const err = e instanceof HttpError ? e : new HttpError(500, 'internal error in the model double', 'server_error')
      if (err.status === 413) {
        // Answer, then drop the connection rather than read the rest of an oversized body.
        res.setHeader('connection', 'close')
        res.on('finish', () => req.destroy())
      }
      if (!res.headersSent) sendJson(res, err.status, errorBody(err))
      else res.destroy()
    }
  }

  const server: Server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const addr = server.address() as AddressInfo
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  return {
    url: `http://${host}:${addr.port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
