/**
 * The size limit of a user message (a prompt on any transport, or a rendered custom command):
 * 1 MiB of UTF-8, about 250,000 tokens, more than any model's context window. A larger message
 * is refused before anything is queued or written, with the coded error `message_too_large`,
 * which each wire maps in its error table (HTTP: 413; ACP: Invalid params; the JSON-lines RPC: a
 * failed response with the message).
 */
import { ChimeraError } from '../errors.ts'

export const MAX_USER_MESSAGE_BYTES = 1024 * 1024

/** The refusal of a user message (`what`, with its size) over `limit`: `message_too_large`, its detail the limit. */
export const messageTooLarge = (what: string, limit = MAX_USER_MESSAGE_BYTES): ChimeraError<'message_too_large'> =>
  new ChimeraError('message_too_large', `${what} exceeds the ${limit}-byte limit of a user message`, {
    detail: { limit_bytes: limit },
  })

/** Throw `message_too_large` when `text` is over the limit (its UTF-8 length). */
export function checkUserMessage(text: string, what = 'the message', limit = MAX_USER_MESSAGE_BYTES): void {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no count.
  if (text.length * 3 <= limit) return
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > limit) throw messageTooLarge(`${what} (${bytes} bytes)`, limit)
}
