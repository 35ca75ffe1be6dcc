/**
 * `GET /sessions/{id}`'s body (`chimera otter sessions show --json`), and what the transcript
 * routes render: the manager's `detail` (a live session's current state, or a persisted one read
 * without making it live), an unknown id answering `404 session_not_found`.
 */
import type { SessionDetail } from '../../store/types.ts'
import type { HttpDeps } from '../deps.ts'

/** The manager's detail; an unknown or deleted session is its `session_not_found`. */
export async function sessionDetail(deps: HttpDeps, id: string): Promise<SessionDetail> {
  return deps.manager.detail(id)
}
