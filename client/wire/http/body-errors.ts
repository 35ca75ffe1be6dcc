/**
 * The invoke body's errors as docs/commands.md "Custom slash commands over HTTP" names them, checked
 * in the document's order: no `session_id` → `missing_session_id`; `args` not a list →
 * `args_must_be_list`; `kwargs` not an object → `kwargs_must_be_object`; a `session_id` no
 * session can have → `404 session_not_found`. Anything else wrong is the generic `invalid_body`.
 * `POST /tool/approve` likewise answers an impossible `session_id` with `session_not_found`.
 * Part of the operation pipeline: the server and the msw mock answer these alike.
 */
import { SessionIdSchema } from '../../../generated/schemas.gen.ts'
import type { HttpOperationId } from '../../../generated/http/routes.gen.ts'
import { HttpError } from './errors.ts'

/** Maps a body that failed its schema to the document's error for that operation, if it names one. */
export type BodyErrorMapper = (raw: unknown) => HttpError | undefined

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export const invokeBodyError: BodyErrorMapper = (raw) => {
  if (raw !== undefined && !isObject(raw)) return undefined
  const b = raw ?? {}
  if (typeof b.session_id !== 'string' || b.session_id === '')
    return new HttpError('missing_session_id', 'the body lacks session_id')
  if (b.args !== undefined && !Array.isArray(b.args))
    return new HttpError('args_must_be_list', '`args` must be a JSON list')
  if (b.kwargs !== undefined && !isObject(b.kwargs))
    return new HttpError('kwargs_must_be_object', '`kwargs` must be a JSON object')
  if (!SessionIdSchema.safeParse(b.session_id).success) return new HttpError('session_not_found', 'unknown session_id')
  return undefined
}

/** `POST /tool/approve` with a `session_id` no session can have: the document's `session_not_found`. */
export const approveBodyError: BodyErrorMapper = (raw) => {
  if (!isObject(raw) || typeof raw.session_id !== 'string') return undefined
  return SessionIdSchema.safeParse(raw.session_id).success
    ? undefined
    : new HttpError('session_not_found', 'unknown session_id')
}

export const bodyErrors: Partial<Record<HttpOperationId, BodyErrorMapper>> = {
  'commands.invoke': invokeBodyError,
  'tool.approve': approveBodyError,
}
