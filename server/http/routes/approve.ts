/**
 * `POST /tool/approve`: answers a pending tool permission request of a live session, from
 * HTTP, whichever transport the turn runs on. Unknown session: `404 session_not_found`; no such
 * pending request: `404 request_not_found`; a decision the request does not offer: `400`.
 */
import type { OperationHandlers } from '../app.ts'
import { liveSession, type HttpDeps } from '../deps.ts'
import { HttpError, jsonResponse } from '../errors.ts'

export function approveHandlers(deps: HttpDeps): Pick<OperationHandlers, 'tool.approve'> {
  return {
    'tool.approve': async ({ body }) => {
      const b = body
      const session = await liveSession(deps, b.session_id)
      const notFound = (): HttpError =>
        new HttpError(
          'request_not_found',
          `no pending permission request ${JSON.stringify(b.request_id.slice(0, 160))} in this session`,
        )
      if (!session.pendingPermissions().includes(b.request_id)) throw notFound()
      const pending = (await session.pendingPermissionRequests()).find((r) => r.request_id === b.request_id)
      if (pending && !pending.options.includes(b.decision)) {
        throw new HttpError('invalid_body', `decision must be one of ${pending.options.join(', ')}`, {
          detail: [{ path: 'decision', message: 'not offered by this request' }],
        })
      }
      if (!session.replyPermission(b.request_id, b.decision, 'http')) throw notFound()
      return jsonResponse(200, { ok: true })
    },
  }
}
