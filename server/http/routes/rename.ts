/**
 * `PATCH /sessions/{id}` (specs/openapi/chimera.openapi.yaml, operationId `sessions.rename`):
 * set or clear a session's title. Whitespace runs become one space and the ends are trimmed;
 * blank or `null` clears it; more than `TITLE_MAX` characters after that is `400 invalid_body`. A persisted session that is not
 * in memory is loaded, as for the other `/sessions/{id}` writes. The change is a
 * `session_renamed` event (on disk before the answer); the answer is the summary with it.
 */
import type { SessionSummary } from '../../../generated/schemas.gen.ts'
import { normalizeTitle, TITLE_MAX } from '../../core/session.ts'
import type { OperationHandlers } from '../app.ts'
import { anySession, type HttpDeps } from '../deps.ts'
import { HttpError, jsonResponse } from '../errors.ts'

export function renameHandlers(deps: HttpDeps): Pick<OperationHandlers, 'sessions.rename'> {
  return {
    'sessions.rename': async ({ path, body }) => {
      const title = normalizeTitle(body.title)
      if (title !== null && title.length > TITLE_MAX) {
        const message = `at most ${TITLE_MAX} characters once trimmed (got ${title.length})`
        throw new HttpError('invalid_body', `title: ${message}`, { detail: [{ path: 'title', message }] })
      }
      const session = await anySession(deps, path.id)
      // A turn whose end a client saw (on any instance's stream) answers with the settled summary.
      await session.settleFinishedTurn()
      await session.rename(title)
      return jsonResponse(200, session.summary as SessionSummary)
    },
  }
}
