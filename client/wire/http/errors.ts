/**
 * The HTTP surface's error: a status and a stable `error` code from the spec's ErrorCode enum,
 * and the one way it becomes the spec's ErrorBody. Thrown by the operation pipeline
 * (client/wire/http/pipeline.ts), which the server and the msw mock both run, so both answer a
 * bad request with the same status, code and body.
 */
import type { ErrorBody, ErrorCode } from '../../../generated/schemas.gen.ts'

export class HttpError extends Error {
  readonly status: number
  readonly code: ErrorCode
  readonly detail: unknown
  readonly headers: Record<string, string>
  /** The body's `name`: the missing resource, where one is named (`command_not_found`). */
  readonly resource: string | undefined
  constructor(
    status: number,
    code: ErrorCode,
    message?: string,
    opts: { detail?: unknown; headers?: Record<string, string>; name?: string } = {},
  ) {
    super(message ?? code)
    this.name = 'HttpError'
    this.status = status
    this.code = code
    this.detail = opts.detail
    this.headers = opts.headers ?? {}
    this.resource = opts.name
  }

  static is(x: unknown): x is HttpError {
    return (
      x instanceof HttpError ||
      (typeof x === 'object' &&
        x !== null &&
        (x as Error).name === 'HttpError' &&
        typeof (x as HttpError).status === 'number')
    )
  }
}

/** The ErrorBody of an HttpError: `error`, and `message`, `detail`, `name` when it has them. */
export function errorBody(err: HttpError): ErrorBody {
  const body: Record<string, unknown> = { error: err.code }
  if (err.message && err.message !== err.code) body.message = err.message
  if (err.detail !== undefined) body.detail = err.detail
  if (err.resource !== undefined) body.name = err.resource
  return body as ErrorBody
}
