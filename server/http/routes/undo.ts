/**
 * File-level undo and redo over HTTP (docs/undo.md "File-level undo", the "forthcoming endpoint"),
 * in both families: `POST /sessions/{id}/undo|redo` and `/session/{id}/undo|redo`, body
 * `{steps}` (default 1). The same operation as the `/undo` and `/redo` slash commands (messages
 * and files together), answered with its reply line. Nothing to move is `409 nothing_to_undo`
 * (`nothing_to_redo`); a turn in progress is `409 session_busy` (the rewind would otherwise wait
 * behind it for as long as the turn runs) — unless it already wrote its result and is only
 * saving, which a client that saw the result must not be told is busy: that is waited for.
 */
import type { UndoRequest } from '../../../generated/http/routes.gen.ts'
import type { Session } from '../../core/session.ts'
import type { OperationHandlers } from '../app.ts'
import { anySession, liveSession, type HttpDeps } from '../deps.ts'
import { HttpError, jsonResponse } from '../errors.ts'

/** True while a turn runs; a turn that already wrote its terminal event is waited for (it is only saving). */
async function busy(session: Session): Promise<boolean> {
  await session.settleFinishedTurn()
  return session.status === 'running'
}

async function rewind(session: Session, kind: 'undo' | 'redo', body: UndoRequest | undefined): Promise<Response> {
  if (await busy(session)) throw new HttpError('session_busy', `a turn is running; /${kind} waits until it ends`)
  const steps = body?.steps ?? 1
  const r = kind === 'undo' ? await session.undo(steps) : await session.redo(steps)
  if (r.turns === 0) throw new HttpError(kind === 'undo' ? 'nothing_to_undo' : 'nothing_to_redo', r.output)
  return jsonResponse(200, {
    message: r.output,
    turns: r.turns,
    files_restored: r.files_restored,
    remaining: r.remaining,
  })
}

type Handlers = Pick<OperationHandlers, 'sessions.undo' | 'sessions.redo' | 'session.undo' | 'session.redo'>

export function undoHandlers(deps: HttpDeps): Handlers {
  return {
    'sessions.undo': async ({ path, body }) => rewind(await anySession(deps, path.id), 'undo', body),
    'sessions.redo': async ({ path, body }) => rewind(await anySession(deps, path.id), 'redo', body),
    'session.undo': async ({ path, body }) => rewind(await liveSession(deps, path.id), 'undo', body),
    'session.redo': async ({ path, body }) => rewind(await liveSession(deps, path.id), 'redo', body),
  }
}
