/** `session/list`: the one listing (store/listing.ts) of this agent's sessions (optionally of one working directory), 100 a page. */
import type { SessionManager } from '../../core/manager.ts'
import { listedTitle } from './event-map.ts'

/** Rows per `session/list` page. */
const LIST_PAGE = 100

export async function listSessions(manager: SessionManager, p: { cwd?: string | null; cursor?: string | null }) {
  // A cursor the store did not make is its `invalid_cursor`: Invalid params (server/acp/errors.ts).
  const page = await manager.listSessions({
    agents: [manager.opts.agent],
    limit: LIST_PAGE,
    ...(p.cwd ? { cwd: p.cwd } : {}),
    ...(p.cursor ? { cursor: p.cursor } : {}),
  })
  return {
    sessions: page.sessions.map((s) => ({
      sessionId: s.session_id,
      cwd: s.working_dir ?? manager.opts.cwd,
      ...(listedTitle(s) ? { title: listedTitle(s) } : {}),
      ...(s.last_touched !== undefined ? { updatedAt: new Date(s.last_touched * 1000).toISOString() } : {}),
    })),
    ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
  }
}
