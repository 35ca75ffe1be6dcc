/** What the route handlers are built from: one per server, shared by every route group. */
import type { SessionManager } from '../core/manager.ts'
import type { Session, Submitted } from '../core/session.ts'
import { sessionNotFound } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { IdleEviction } from './idle-eviction.ts'
import type { LiveSessions } from '../store/types.ts'
import type { TokenRegistry } from './session-tokens.ts'
import type { StreamRegistry } from './sse/registry.ts'
import type { SseSettings } from './sse/sse-stream.ts'

export interface HttpDeps {
  version: string
  startedAt: Date
  logger: Logger
  manager: SessionManager
  tokens: TokenRegistry
  /**
   * With several instances over one store: which sessions are live on any of them (the singular
   * family's sessions, `GET /session`), shared through the store. Absent: this server's memory.
   */
  live?: LiveSessions
  /** The master bearer token, when one is configured (it is exempt from the per-caller stream limits). */
  masterToken?: string
  streams: StreamRegistry
  sse: SseSettings
  eviction: IdleEviction
  /** Environment for features that read it (share URL, user command dir). */
  env: NodeJS.ProcessEnv
}

/**
 * A session of the manager (singular family: live sessions only), touched. With a shared store:
 * a session live on any instance (touched within the idle TTL there), loaded here if need be.
 */
export async function liveSession(deps: HttpDeps, id: string): Promise<Session> {
  if (deps.live) {
    if (deps.manager.deleting(id) || !(await deps.live.touch(id, { ifLive: true }))) throw sessionNotFound(id)
    const s = await deps.manager.get(id)
    s.touch()
    return s
  }
  if (!deps.manager.peek(id)) throw sessionNotFound(id)
  // Through `get`: a copy read without the file store's marker is checked (and read again when
  // another process holds the session or wrote it since), as every other use checks it.
  const s = await deps.manager.get(id)
  s.touch()
  return s
}

/** A live session, or a persisted one loaded into the manager (plural family), touched (live again). */
export async function anySession(deps: HttpDeps, id: string): Promise<Session> {
  const s = await deps.manager.get(id)
  s.touch()
  if (deps.live) await deps.live.touch(id)
  return s
}

/** A session just created is live (on every instance, with a shared store). */
export async function created(deps: HttpDeps, s: Session): Promise<void> {
  if (deps.live) await deps.live.touch(s.id)
}

/** A turn started over HTTP runs in the background; its failures are logged, never thrown. */
export function background(deps: HttpDeps, session: Session, done: Promise<unknown>): void {
  done.catch((err) => deps.logger.error(`session ${session.id}: turn failed`, err))
}

/**
 * Wait until an accepted prompt is on disk before acknowledging it; one the event log refused
 * rejects with `prompt_not_recorded` (`507 storage_full`: nothing was queued), or with
 * `session_not_found` when the session was deleted under the write. Its turn is followed in the
 * background.
 */
export async function acknowledge(deps: HttpDeps, session: Session, submitted: Submitted): Promise<void> {
  // A session closed (deleted, evicted) between the lookup and the prompt queued nothing.
  if (session.closed) throw sessionNotFound(session.id)
  background(deps, session, submitted.done)
  await submitted.accepted
}
