/**
 * `GET /sessions/{id}`'s body (`chimera otter sessions show --json`): a live session's current
 * summary and events, or a persisted one read from disk without loading it into the manager
 * (a read does not make a session live, nor reset its idle clock) — unless prompts it had accepted
 * were never started (the process stopped): then it is loaded, which closes them in the log.
 */
import type { SessionDetail } from '../../../generated/http/routes.gen.ts'
import type { SessionSummary } from '../../../generated/schemas.gen.ts'
import { isSessionId } from '../../store/paths.ts'
import type { HttpDeps } from '../deps.ts'
import { sessionNotFound } from '../../errors.ts'

export async function sessionDetail(deps: HttpDeps, id: string): Promise<SessionDetail> {
  const live = deps.manager.peek(id)
  if (live) {
    live.touch()
    await live.flush()
    return { session_id: id, summary: live.summary as SessionSummary, events: await live.events() }
  }
  if (!isSessionId(id) || deps.manager.deleting(id)) throw sessionNotFound(id)
  const loaded = await deps.manager.store.load(id)
  if (!loaded || deps.manager.deleting(id)) throw sessionNotFound(id)
  if (loaded.queued.length === 0) return { session_id: id, summary: loaded.summary, events: loaded.events }
  // Prompts accepted before a crash and never started: loading the session closes them in the
  // log (Session.restore), so the answer shows every accepted prompt.
  const session = await deps.manager.get(id)
  await session.idle()
  await session.flush()
  return { session_id: id, summary: session.summary as SessionSummary, events: await session.events() }
}
