/**
 * `GET /sessions/{id}`'s body (`chimera otter sessions show --json`), and what the transcript
 * routes render: the manager's `detail` (a live session's current state, or a persisted one read
 * without making it live), an unknown id answering `404 session_not_found`.
 */
import { SessionNotFoundError } from '../../core/manager.ts'
import type { SessionDetail } from '../../store/types.ts'
import { sessionNotFound, type HttpDeps } from '../deps.ts'

export async function sessionDetail(deps: HttpDeps, id: string): Promise<SessionDetail> {
  try {
    return await deps.manager.detail(id)
  } catch (err) {
    if (err instanceof SessionNotFoundError) throw sessionNotFound(id)
    throw err
  }
}
