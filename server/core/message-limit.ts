/**
 * The size limit of a user message (a prompt on any transport, or a rendered custom command):
 * 1 MiB of UTF-8, about 250,000 tokens, more than any model's context window. A larger message
 * is refused before anything is queued or written, with the coded error `message_too_large`,
 * which each wire maps once (HTTP: 413 in server/http/errors.ts; JSON-RPC: Invalid params in
 * server/acp/session-errors.ts; the JSON-lines RPC: a failed response with the message).
 */

export const MAX_USER_MESSAGE_BYTES = 1024 * 1024

/** A user message (or a command's rendering) over {@link MAX_USER_MESSAGE_BYTES}. */
export class MessageTooLargeError extends Error {
  override name = 'MessageTooLargeError'
  readonly code = 'message_too_large' as const
  readonly limit: number
  constructor(what: string, limit = MAX_USER_MESSAGE_BYTES) {
    super(`${what} exceeds the ${limit}-byte limit of a user message`)
    this.limit = limit
  }

  /** True for a MessageTooLargeError, also from a second copy of this module. */
  static is(x: unknown): x is MessageTooLargeError {
    return (
      x instanceof Error &&
      x.name === 'MessageTooLargeError' &&
      (x as MessageTooLargeError).code === 'message_too_large'
    )
  }
}

/** Throw MessageTooLargeError when `text` is over the limit (its UTF-8 length). */
export function checkUserMessage(text: string, what = 'the message', limit = MAX_USER_MESSAGE_BYTES): void {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no count.
  if (text.length * 3 <= limit) return
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > limit) throw new MessageTooLargeError(`${what} (${bytes} bytes)`, limit)
}
