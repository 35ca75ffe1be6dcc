/**
 * The model double: an OpenAI-compatible HTTP server on loopback that plays the offline
 * model's directive language as real chat completions (DESIGN §5; docs/providers.md). Any
 * implementation points its OpenAI-compatible provider at `<url>/v1` and the same transcripts
 * drive it. Hand-written on node:http (docs/decisions/0041-model-double-on-node-http.md): the
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
 * - Errors use OpenAI's shape `{"error": {"message", "type", "param", "code"}}`: an unknown
 *   model is 404 `model_not_found`, a bad body 400, a missing or wrong key (when the double was
 *   started with one) 401.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { wordChunks, type Plan } from '../../server/providers/directives.ts'
import { planFor, pieces, usageOf, type WireMessage } from './play.ts'

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
const MAX_BODY = 4 * 1024 * 1024

class HttpError extends Error {
  readonly status: number
  readonly type: string
  readonly code: string | null
  constructor(status: number, message: string, type: string, code: string | null = null) {
    super(message)
    this.status = status
    this.type = type
    this.code = code
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  // A rate limit says when to come back, as OpenAI's does.
  const retry = status === 429 ? { 'retry-after': '1' } : {}
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...retry })
  res.end(text)
}

const errorBody = (e: HttpError) => ({ error: { message: e.message, type: e.type, param: null, code: e.code } })

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      if (size > MAX_BODY) return // already refused; the rest is dropped until the answer is out
      size += c.length
      if (size > MAX_BODY) {
        chunks.length = 0
        reject(new HttpError(413, `request body over ${MAX_BODY} bytes`, 'invalid_request_error'))
      } else chunks.push(c)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

interface ChatRequest {
  model: string
  messages: WireMessage[]
  stream: boolean
  includeUsage: boolean
}

function parseChatRequest(text: string): ChatRequest {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new HttpError(400, 'the request body is not valid JSON', 'invalid_request_error')
  }
  const b = body as { model?: unknown; messages?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } }
  if (typeof body !== 'object' || body === null) throw new HttpError(400, 'the request body must be a JSON object', 'invalid_request_error')
  if (typeof b.model !== 'string') throw new HttpError(400, "'model' is required and must be a string", 'invalid_request_error')
  if (!Array.isArray(b.messages) || b.messages.some((m) => typeof m !== 'object' || m === null || typeof (m as { role?: unknown }).role !== 'string')) {
    throw new HttpError(400, "'messages' must be an array of messages with a 'role'", 'invalid_request_error')
  }
  if (b.stream !== undefined && typeof b.stream !== 'boolean') throw new HttpError(400, "'stream' must be a boolean", 'invalid_request_error')
  return { model: b.model, messages: b.messages as WireMessage[], stream: b.stream === true, includeUsage: b.stream_options?.include_usage === true }
}

/** `!fail 503 overloaded` → 503; any other message → 500. */
function failStatus(message: string): number {
  const m = /^(\d{3})\b/.exec(message)
  const n = m ? Number(m[1]) : 500
  return n >= 400 && n <= 599 ? n : 500
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false)
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    const onAbort = (): void => {
      clearTimeout(t)
      resolve(false)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
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
      if (path !== '/v1/chat/completions') throw new HttpError(404, `no route for ${method} ${path || '/'}`, 'invalid_request_error', 'not_found')
      if (method !== 'POST') throw new HttpError(405, `${path} takes POST`, 'invalid_request_error')
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
