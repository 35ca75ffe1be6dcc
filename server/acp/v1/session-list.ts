/** `session/list`: this agent's sessions (optionally of one working directory), 100 a page. */
import type { SessionManager } from '../../core/manager.ts'
import { RpcError } from '../../jsonrpc/errors.ts'
import { listedTitle } from './event-map.ts'

export async function listSessions(manager: SessionManager, p: { cwd?: string | null; cursor?: string | null }) {
  const PAGE = 100
  const start = p.cursor ? Number.parseInt(p.cursor, 10) : 0
  if (!Number.isInteger(start) || start < 0)
    throw RpcError.invalidParams([{ path: 'cursor', message: 'unknown cursor' }])
  const all = (await manager.list({ agents: [manager.opts.agent] })).filter((s) => !p.cwd || s.working_dir === p.cwd)
  const page = all.slice(start, start + PAGE)
  return {
    sessions: page.map((s) => ({
      sessionId: s.session_id,
      cwd: s.working_dir ?? manager.opts.cwd,
      ...(listedTitle(s) ? { title: listedTitle(s) } : {}),
      ...(s.last_touched !== undefined ? { updatedAt: new Date(s.last_touched * 1000).toISOString() } : {}),
    })),
    ...(start + PAGE < all.length ? { nextCursor: String(start + PAGE) } : {}),
  }
}
