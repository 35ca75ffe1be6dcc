/**
 * The singular session family of the multi-session manager (docs/http.md "Multi-session support",
 * "Authentication (per-session tokens)"): create an idle session and issue its token, list live
 * ids, snapshot, send a message, cancel, tear down, rotate the token. These routes see live
 * sessions only: an evicted or deleted session is `404` here (the plural family still shows a
 * persisted one from disk).
 */
import type { SessionCreateRequest, SessionSnapshot } from '../../../generated/http/routes.gen.ts'
import type { OperationHandlers } from '../app.ts'
import { acknowledge, liveSession, type HttpDeps } from '../deps.ts'
import { sessionNotFound } from '../../errors.ts'
import { jsonResponse } from '../errors.ts'
import { createOptions } from './create-options.ts'

type Handlers = Pick<
  OperationHandlers,
  | 'session.create'
  | 'session.list'
  | 'session.get'
  | 'session.delete'
  | 'session.sendMessage'
  | 'session.cancel'
  | 'session.rotateToken'
>

export function sessionHandlers(deps: HttpDeps): Handlers {
  return {
    'session.create': async ({ body }) => {
      const b: Partial<SessionCreateRequest> = body ?? {}
      const session = await deps.manager.create(createOptions(deps, { ...b, cwd: b.working_dir }, 'working_dir'))
      const token = await deps.tokens.issue(session.id)
      return jsonResponse(201, {
        session_id: session.id,
        working_dir: session.meta.cwd,
        created_at: Date.parse(session.meta.created_at) / 1000,
        session_token: token,
      })
    },
    'session.list': async () => {
      // With a shared store: the sessions live on any instance, most recently touched first.
      if (deps.live)
        return jsonResponse(
          200,
          (await deps.live.list()).filter((id) => !deps.manager.deleting(id)),
        )
      const live = deps.manager.live().sort((a, b) => b.lastTouched - a.lastTouched)
      return jsonResponse(
        200,
        live.map((s) => s.id),
      )
    },
    'session.get': async ({ path }) => {
      const s = await liveSession(deps, path.id)
      await s.flush()
      const snapshot: SessionSnapshot = {
        session_id: s.id,
        working_dir: s.meta.cwd,
        created_at: Date.parse(s.meta.created_at) / 1000,
        last_touched: s.lastTouched / 1000,
        event_count: s.lastSeq,
        status: s.status,
        model: s.model,
        mode: s.mode,
        messages: s.messages(),
      }
      return jsonResponse(200, snapshot)
    },
    'session.delete': async ({ path }) => {
      const id = path.id
      // Gone everywhere it is listed: memory, the event log, the undo history (chimera.openapi.yaml session.delete).
      if (!(await deps.manager.delete(id, { purge: true }))) throw sessionNotFound(id)
      await deps.live?.forget(id)
      return jsonResponse(204, null)
    },
    'session.sendMessage': async ({ path, body }) => {
      const s = await liveSession(deps, path.id)
      const b = body
      const submitted = s.prompt((b.message ?? b.prompt)!)
      await acknowledge(deps, s, submitted)
      return jsonResponse(202, { message_id: submitted.messageId })
    },
    'session.cancel': async ({ path }) => {
      ;(await liveSession(deps, path.id)).cancel()
      return jsonResponse(204, null)
    },
    'session.rotateToken': async ({ path }) => {
      const s = await liveSession(deps, path.id)
      return jsonResponse(200, { session_token: await deps.tokens.issue(s.id) })
    },
  }
}
