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
  return undefined
}

export function errorResponse(err: unknown, logger: Logger): Response {
  err = coreHttpError(err) ?? err
  if (HttpError.is(err)) return jsonResponse(err.status, errorBody(err), err.headers)
  logger.error('unhandled error in HTTP handler', err)
  return jsonResponse(500, { error: 'internal_error', message: 'internal server error' })
}
