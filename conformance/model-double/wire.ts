/**
 * The HTTP plumbing every wire of the model double shares (OpenAI chat completions and
 * Responses, Anthropic Messages, Gemini): what a wire module provides (`Wire`), the coded
 * error each wire maps to its own body, JSON answers (429 with `retry-after`), the SSE head,
 * the bounded body reader, the `!fail` status and a `!sleep` that ends when the client goes away.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

export const MAX_BODY = 4 * 1024 * 1024

export class HttpError extends Error {
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

/** What every wire's handler gets from the server. */
export interface WireContext {
  models: readonly string[]
  /** Characters per streamed tool-argument piece. */
  argChunk: number
  /** Aborted when the client goes away. */
  signal: AbortSignal
  /** The next answer number (ids). */
  next(): number
  /** Logs the parsed request. */
  record(body: unknown): void
}

/** One API the double speaks: which paths are its own, how it checks the key, its error body, its handler. */
export interface Wire {
  name: string
  serves(path: string, req: IncomingMessage): boolean
  /** Whether the request carries `key` the way this API sends it. */
  authorized(req: IncomingMessage, url: URL, key: string): boolean
  /** The 401-or-alike when it does not. */
  unauthorized(): HttpError
  errorBody(e: HttpError): unknown
  handle(req: IncomingMessage, res: ServerResponse, url: URL, ctx: WireContext): Promise<void>
}

/** A `!fail` line as the coded error it stands for (500, or the status its message starts with). */
export const failure = (message: string, code: string | null = null): HttpError =>
  new HttpError(failStatus(message), message, 'server_error', code)

/** Sends the head of a 200 event stream (each wire sends it lazily, with its first event). */
export function openSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
}

/** The one unknown-model error; each wire words the body its own way. */
export const unknownModel = (model: string): HttpError =>
  new HttpError(404, `The model \`${model}\` does not exist.`, 'invalid_request_error', 'model_not_found')

export const badRequest = (message: string): HttpError => new HttpError(400, message, 'invalid_request_error')

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  // A rate limit says when to come back, as OpenAI's does.
  const retry = status === 429 ? { 'retry-after': '1' } : {}
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...retry })
  res.end(text)
}

/** OpenAI's error body (chat completions and Responses); the other wires map HttpError in their own tables. */
export const openaiErrorBody = (e: HttpError) => ({
  error: { message: e.message, type: e.type, param: null, code: e.code },
})

export function readBody(req: IncomingMessage): Promise<string> {
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

/** The request body as a JSON object, or a 400. */
export function parseObject(text: string): Record<string, unknown> {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw badRequest('the request body is not valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the request body must be a JSON object')
  return body as Record<string, unknown>
}

/** `!fail 503 overloaded` → 503; any other message → 500. */
export function failStatus(message: string): number {
  const m = /^(\d{3})\b/.exec(message)
  const n = m ? Number(m[1]) : 500
  return n >= 400 && n <= 599 ? n : 500
}

/** Resolves true after `ms`, or false as soon as the client is gone. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
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
