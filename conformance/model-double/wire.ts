/**
 * The HTTP plumbing both wires of the model double share (chat completions and the Responses
 * API): OpenAI's error shape, JSON answers (429 with `retry-after`), the bounded body reader,
 * the `!fail` status and a `!sleep` that ends when the client goes away.
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

export const badRequest = (message: string): HttpError => new HttpError(400, message, 'invalid_request_error')

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  // A rate limit says when to come back, as OpenAI's does.
  const retry = status === 429 ? { 'retry-after': '1' } : {}
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...retry })
  res.end(text)
}

export const errorBody = (e: HttpError) => ({ error: { message: e.message, type: e.type, param: null, code: e.code } })

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
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the request body must be a JSON object')
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
