/**
 * The single error funnel of the HTTP surface. Handlers throw `HttpError` with a status and a
 * stable `error` code (the class and its ErrorBody live with the operation pipeline the msw mock
 * shares, client/wire/http/errors.ts); everything else is a masked 500 (`internal_error`), its
 * details logged.
 */
import { FastResponse } from 'srvx'
import { HttpError, errorBody } from '../../client/wire/http/errors.ts'
import { MessageTooLargeError } from '../core/message-limit.ts'
import { StoreError } from '../store/errors.ts'
import type { Logger } from '../log.ts'

export { HttpError }

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

/** The core's coded errors as HTTP errors: one table for every route. */
export function coreHttpError(err: unknown): HttpError | undefined {
  if (MessageTooLargeError.is(err))
    return new HttpError(413, err.code, err.message, { detail: { limit_bytes: err.limit } })
  // The session's files went away under a request (a delete finished first): it is unknown now.
  if (err instanceof StoreError && err.code === 'session_not_found')
    return new HttpError(404, 'session_not_found', 'unknown session id')
  const unavailable = storeUnavailable(err)
  if (unavailable) return unavailable
  return undefined
}

/**
 * A store that cannot reach its server (Redis down or restarting) — itself, or as the cause of a
 * prompt it could not record — is `503 service_unavailable` with `Retry-After`: nothing was
 * acknowledged, the same request can be sent again.
 */
export function storeUnavailable(err: unknown): HttpError | undefined {
  const store =
    err instanceof StoreError ? err : err instanceof Error && err.cause instanceof StoreError ? err.cause : undefined
  if (store?.code !== 'store_unavailable') return undefined
  const detail = store.detail as { retry_after_s?: unknown } | undefined
  const after = typeof detail?.retry_after_s === 'number' ? detail.retry_after_s : 1
  return new HttpError(503, 'service_unavailable', store.message, { headers: { 'retry-after': String(after) } })
}

export function errorResponse(err: unknown, logger: Logger): Response {
  err = coreHttpError(err) ?? err
  if (HttpError.is(err)) return jsonResponse(err.status, errorBody(err), err.headers)
  logger.error('unhandled error in HTTP handler', err)
  return jsonResponse(500, { error: 'internal_error', message: 'internal server error' })
}
