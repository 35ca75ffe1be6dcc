/**
 * The SDK's two error families (docs/decisions/0090): `ChimeraApiError` is an answer the server
 * sent (an HTTP error status with the spec's ErrorBody); `ChimeraClientError` is a local failure
 * (the stream broke its contract, a reconnection budget ran out, a child process died). Both are
 * recognised by name as well as by class, so two bundled copies of the SDK agree.
 */
import type { ErrorBody, ErrorCode } from '../generated/schemas.gen.ts'

export type { ErrorBody, ErrorCode }

/** An HTTP error answer. `code` is the body's `error` (the spec's ErrorCode) when the body has the ErrorBody shape. */
export class ChimeraApiError extends Error {
  override readonly name = 'ChimeraApiError'
  readonly status: number
  /** The spec's error code, or `unexpected_response` when the body is not an ErrorBody (a proxy's HTML page, say). */
  readonly code: ErrorCode | 'unexpected_response'
  /** The ErrorBody as sent, when the server sent one. */
  readonly body: ErrorBody | undefined
  /** `METHOD /path/template` of the operation that failed. */
  readonly operation: string

  constructor(status: number, body: unknown, operation: string) {
    const errorBody = isErrorBody(body) ? body : undefined
    const code = errorBody?.error ?? 'unexpected_response'
    super(`${operation} → ${status} ${code}${errorBody?.message ? `: ${errorBody.message}` : ''}`)
    this.status = status
    this.code = code
    this.body = errorBody
    this.operation = operation
  }

  /** True for a ChimeraApiError (from any copy of the SDK), optionally with one of `codes`. */
  static is(x: unknown, ...codes: (ErrorCode | 'unexpected_response')[]): x is ChimeraApiError {
    if (
      !(x instanceof ChimeraApiError) &&
      !(isNamed(x, 'ChimeraApiError') && typeof (x as ChimeraApiError).status === 'number')
    )
      return false
    return codes.length === 0 || codes.includes((x as ChimeraApiError).code)
  }
}

/** Local failure kinds: never sent by a server. */
export type ClientErrorKind =
  /** An event stream answered something that is not an event stream, or a record broke the SSE contract. */
  | 'protocol'
  /** The reconnection budget (`maxAttempts` failures in a row) ran out. */
  | 'reconnect_exhausted'
  /** A child process (RPC, ACP) exited or closed its pipes. */
  | 'closed'
  /** An RPC command got `success: false`. */
  | 'command_failed'

export class ChimeraClientError extends Error {
  override readonly name = 'ChimeraClientError'
  readonly kind: ClientErrorKind

  constructor(kind: ClientErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.kind = kind
  }

  static is(x: unknown, ...kinds: ClientErrorKind[]): x is ChimeraClientError {
    if (
      !(x instanceof ChimeraClientError) &&
      !(isNamed(x, 'ChimeraClientError') && typeof (x as ChimeraClientError).kind === 'string')
    )
      return false
    return kinds.length === 0 || kinds.includes((x as ChimeraClientError).kind)
  }
}

const isNamed = (x: unknown, name: string): boolean => typeof x === 'object' && x !== null && (x as Error).name === name

function isErrorBody(x: unknown): x is ErrorBody {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && typeof (x as ErrorBody).error === 'string'
}
