/**
 * The single error funnel of the HTTP surface, and its two tables. `HTTP_STATUS` gives every
 * `ErrorCode` of the spec its one status; `DOMAIN_HTTP` maps every domain code of the core's
 * `ChimeraError` to the `ErrorCode` the body carries, or to `internal` (a masked 500, its details
 * logged). Handlers throw a `ChimeraError` for what the core and features refuse, and an
 * `HttpError` for what only HTTP knows (routing, guards, bodies); anything else is a masked 500
 * (`internal_error`). Every error body has the spec's ErrorBody shape.
 */
import { FastResponse } from 'srvx'
import type { ErrorCode } from '../../generated/schemas.gen.ts'
import { ChimeraError, type DomainErrorCode } from '../errors.ts'
import type { Logger } from '../log.ts'

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

/**
 * How HTTP shows each domain error: the body's `error` code (its status from `HTTP_STATUS`), or
 * `internal` (a masked 500). The body keeps the error's message, `detail` and, where the table
 * says so, `name` (the missing resource).
 */
export type HttpErrorMapping = { error: ErrorCode; name?: true } | 'internal'

export const DOMAIN_HTTP: Record<DomainErrorCode, HttpErrorMapping> = {
  args_must_be_list: { error: 'args_must_be_list' },
  command_invoke_failed: { error: 'command_invoke_failed' },
  command_not_found: { error: 'command_not_found', name: true },
  invalid_event: 'internal',
  invalid_meta: 'internal',
  invalid_query: { error: 'invalid_query' },
  // A malformed id names no session: unknown, as any other id no session has.
  invalid_session_id: { error: 'session_not_found' },
  invalid_share: { error: 'invalid_body' },
  invalid_summary: 'internal',
  kwargs_must_be_object: { error: 'kwargs_must_be_object' },
  message_too_large: { error: 'message_too_large' },
  missing_session_id: { error: 'missing_session_id' },
  model_unavailable: { error: 'invalid_body' },
  prompt_not_recorded: { error: 'storage_full' },
  runs_cost_failed: { error: 'runs_cost_failed' },
  seq_mismatch: 'internal',
  session_busy: { error: 'session_busy' },
  session_closed: 'internal',
  session_exists: 'internal',
  session_not_found: { error: 'session_not_found' },
  share_failed: { error: 'share_failed' },
  store_full: 'internal',
  unknown_mode: { error: 'invalid_body' },
  unknown_model: { error: 'invalid_body' },
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

/**
 * A JSON answer. srvx's `FastResponse` is a `Response` (instanceof holds) that the Node adapter
 * writes straight to the socket instead of through a web stream: about twice the requests per
 * second on small bodies (bench/http-health.ts).
 */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new FastResponse(status === 204 ? null : JSON.stringify(body), {
    status,
    headers:
      status === 204
        ? headers
        : { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', ...headers },
  })
}

/** A domain error as HTTP shows it, through `DOMAIN_HTTP`; undefined for one it masks. */
export function domainHttpError(err: ChimeraError): HttpError | undefined {
  const m = DOMAIN_HTTP[err.code]
  if (m === 'internal') return undefined
  return new HttpError(m.error, err.message, {
    detail: err.detail,
    ...(m.name && err.resource !== undefined ? { name: err.resource } : {}),
  })
}

/** The error response for anything a handler threw. `status` overrides the code's (h3's own 4xx errors). */
export function errorResponse(err: unknown, logger: Logger, status?: number): Response {
  if (ChimeraError.is(err)) err = domainHttpError(err) ?? err
  if (HttpError.is(err)) {
    const body: Record<string, unknown> = { error: err.code }
    if (err.message && err.message !== err.code) body.message = err.message
    if (err.detail !== undefined) body.detail = err.detail
    if (err.resource !== undefined) body.name = err.resource
    return jsonResponse(status ?? err.status, body, err.headers)
  }
  logger.error('unhandled error in HTTP handler', err)
  return jsonResponse(500, { error: 'internal_error', message: 'internal server error' })
}
