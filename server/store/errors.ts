/**
 * The one error type of the event stores. `code` is stable so transports can map it
 * (`invalid_session_id` and `session_not_found` → 404, `invalid_event` → 400,
 * `store_unavailable` — a store server such as Redis cannot be reached — → 503 with `Retry-After`, …).
 */
export type StoreErrorCode =
  | 'invalid_session_id'
  | 'session_not_found'
  | 'session_exists'
  | 'invalid_event'
  | 'invalid_meta'
  | 'invalid_summary'
  | 'seq_mismatch'
  | 'store_full'
  | 'invalid_cursor'
  | 'store_unavailable'

/** A store operation refused its input or found no session. */
export class StoreError extends Error {
  readonly code: StoreErrorCode
  readonly detail: unknown
  constructor(code: StoreErrorCode, message: string, detail?: unknown) {
    super(message)
    this.name = 'StoreError'
    this.code = code
    this.detail = detail
  }
}

/** A short printable form of an untrusted id, for error messages. */
export function shownId(id: unknown): string {
  return JSON.stringify(String(id).slice(0, 160))
}
