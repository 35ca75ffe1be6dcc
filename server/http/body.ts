/**
 * Reading a JSON request body: `application/json` only (415 otherwise — form and text bodies
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
    throw new HttpError(415, 'unsupported_media_type', 'request body must be application/json')
  }
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit)
  const reader = req.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  if (size === 0) return undefined
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))
  } catch {
    throw new HttpError(400, 'invalid_body', 'request body is not valid UTF-8')
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new HttpError(400, 'invalid_body', `request body is not valid JSON: ${(e as Error).message}`)
  }
}

const tooLarge = (limit: number): HttpError =>
  new HttpError(413, 'body_too_large', `request body exceeds ${limit} bytes`, { headers: { connection: 'close' } })
