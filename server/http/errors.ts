/**
 * The single error funnel of the HTTP surface, and its domain table. `DOMAIN_HTTP` maps every
 * domain code of the core's `ChimeraError` to the `ErrorCode` the body carries, or to `internal`
 * (a masked 500, its details logged). Handlers throw a `ChimeraError` for what the core and
 * features refuse, and an `HttpError` for what only HTTP knows (routing, guards, bodies); anything
 * else is a masked 500 (`internal_error`). `HttpError`, the status of every `ErrorCode`
 * (`HTTP_STATUS`) and the ErrorBody shape live with the operation pipeline the msw mock shares
 * (client/wire/http/errors.ts).
 */
import { FastResponse } from 'srvx'
import type { ErrorCode } from '../../generated/schemas.gen.ts'
import { HttpError, errorBody } from '../../client/wire/http/errors.ts'
import { ChimeraError, type DomainErrorCode } from '../errors.ts'
import type { Logger } from '../log.ts'
import { JSON_HEADERS } from './json-headers.ts'

export { HttpError }

/**
 * How HTTP shows each domain error: the body's `error` code (its status from `HTTP_STATUS`), or
 * `internal` (a masked 500). The body keeps the error's message, `detail` and, where the table
 * says so, `name` (the missing resource) and a `Retry-After` (the error's `detail.retry_after_s`, else 1 s).
 */
export type HttpErrorMapping = { error: ErrorCode; name?: true; retryAfter?: true } | 'internal'

export const DOMAIN_HTTP: Record<DomainErrorCode, HttpErrorMapping> = {
  args_must_be_list: { error: 'args_must_be_list' },
  command_invoke_failed: { error: 'command_invoke_failed' },
  command_not_found: { error: 'command_not_found', name: true },
  invalid_cursor: { error: 'invalid_query' },
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
  // Redis down or restarting: nothing was acknowledged, the same request can be sent again.
  store_unavailable: { error: 'service_unavailable', retryAfter: true },
  unknown_mode: { error: 'invalid_body' },
  unknown_model: { error: 'invalid_body' },
}

/**
 * A JSON answer. srvx's `FastResponse` is a `Response` (instanceof holds) that the Node adapter
 * writes straight to the socket instead of through a web stream: about twice the requests per
 * second on small bodies (bench/http-health.ts).
 */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new FastResponse(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: status === 204 ? headers : { ...JSON_HEADERS, ...headers },
  })
}

/** A domain error as HTTP shows it, through `DOMAIN_HTTP`; undefined for one it masks. */
export function domainHttpError(err: ChimeraError): HttpError | undefined {
  const m = DOMAIN_HTTP[err.code]
  if (m === 'internal') return undefined
  const after = (err.detail as { retry_after_s?: unknown } | undefined)?.retry_after_s
  return new HttpError(m.error, err.message, {
    detail: err.detail,
    ...(m.name && err.resource !== undefined ? { name: err.resource } : {}),
    ...(m.retryAfter ? { headers: { 'retry-after': String(typeof after === 'number' ? after : 1) } } : {}),
  })
}

/** The error response for anything a handler threw. `status` overrides the code's (h3's own 4xx errors). */
export function errorResponse(err: unknown, logger: Logger, status?: number): Response {
  if (ChimeraError.is(err)) err = domainHttpError(err) ?? err
  if (HttpError.is(err)) {
    return jsonResponse(status ?? err.status, errorBody(err), err.headers)
  }
  logger.error('unhandled error in HTTP handler', err)
  return jsonResponse(500, { error: 'internal_error', message: 'internal server error' })
}
