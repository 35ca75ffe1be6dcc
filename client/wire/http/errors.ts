/**
 * The HTTP surface's error: a stable `error` code from the spec's ErrorCode enum (its one status in
 * `HTTP_STATUS`), and the one way it becomes the spec's ErrorBody. Thrown by the operation pipeline
 * (client/wire/http/pipeline.ts), which the server and the msw mock both run, so both answer a
 * bad request with the same status, code and body.
 */
import type { ErrorBody, ErrorCode } from '../../../generated/schemas.gen.ts'

/** The status of every HTTP error code (specs/schemas/common.yaml `ErrorCode`). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  admin_only: 403,
  args_must_be_list: 400,
  bad_request: 400,
  body_too_large: 413,
  command_invoke_failed: 500,
  command_not_found: 404,
  internal_error: 500,
  invalid_authorization: 400,
  invalid_body: 400,
  invalid_query: 400,
  kwargs_must_be_object: 400,
  message_too_large: 413,
  method_not_allowed: 405,
  misdirected_request: 421,
  missing_session_id: 400,
  not_found: 404,
  nothing_to_redo: 409,
  nothing_to_undo: 409,
  origin_not_allowed: 403,
  request_not_found: 404,
  runs_cost_failed: 500,
  service_unavailable: 503,
  session_busy: 409,
  session_not_found: 404,
  share_failed: 502,
  storage_full: 507,
  too_many_streams: 429,
  transcript_failed: 500,
  unauthorized: 401,
  unsupported_media_type: 415,
}

export class HttpError extends Error {
  readonly code: ErrorCode
  readonly detail: unknown
  readonly headers: Record<string, string>
  /** The body's `name`: the missing resource, where one is named (`command_not_found`). */
  readonly resource: string | undefined
  constructor(
    code: ErrorCode,
    message?: string,
    opts: { detail?: unknown; headers?: Record<string, string>; name?: string } = {},
  ) {
    super(message ?? code)
    this.name = 'HttpError'
    this.code = code
    this.detail = opts.detail
    this.headers = opts.headers ?? {}
    this.resource = opts.name
  }

  get status(): number {
    return HTTP_STATUS[this.code]
  }

  static is(x: unknown): x is HttpError {
    return (
      x instanceof HttpError ||
      (typeof x === 'object' &&
        x !== null &&
        (x as Error).name === 'HttpError' &&
        typeof (x as HttpError).code === 'string')
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
