/**
 * Reading a JSON request body (the server and the msw mock, so no Node API): `application/json` only (415 otherwise — form and text bodies
 * would let any web page post cross-origin without a preflight), a byte limit enforced while
 * reading (413), and a clear 400 for malformed JSON.
 */
import { HttpError } from './errors.ts'

/** Default request-body limit: 4 MiB. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024

export async function readJsonBody(req: Request, limit = MAX_BODY_BYTES): Promise<unknown> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  const declared = Number(req.headers.get('content-length') ?? NaN)
  if (!req.body || declared === 0) return undefined
  if (type !== 'application/json') {
    throw new HttpError('unsupported_media_type', 'request body must be application/json')
  }
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit)
  const reader = req.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>
    try {
      next = await reader.read()
    } catch {
      // The client went away mid-upload (or was cut for being too slow): its request, not ours.
      throw new HttpError('invalid_body', 'the request body was not received in full (connection closed)')
    }
    if (next.done) break
    size += next.value.byteLength
    // Stop reading and answer 413 with `connection: close`. Not `reader.cancel()`: that destroys
    // the socket under the response still being written, which crashed the process through
    // the server's graceful close (a chunked body has no length to refuse up front).
    if (size > limit) {
      reader.releaseLock()
      throw tooLarge(limit)
    }
    chunks.push(next.value)
  }
  if (size === 0) return undefined
  let text: string
  try {
    const bytes = new Uint8Array(size)
    let at = 0
    for (const c of chunks) {
      bytes.set(c, at)
      at += c.byteLength
    }
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new HttpError('invalid_body', 'request body is not valid UTF-8')
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new HttpError('invalid_body', `request body is not valid JSON: ${(e as Error).message}`)
  }
}

const tooLarge = (limit: number): HttpError =>
  new HttpError('body_too_large', `request body exceeds ${limit} bytes`, { headers: { connection: 'close' } })
