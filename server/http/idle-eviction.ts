/**
 * TTL eviction of idle sessions (docs/http.md "TTL eviction"): a session untouched for `ttlMs` is
 * evicted — its running turn cancelled, pending permissions released, SSE streams ended with
 * `end` (the manager's evict listeners) — and a persisted one can still be listed and shown
 * from disk. Eviction is opportunistic (every request sweeps first, at most once per
 * `throttleMs`) and a timer sweeps an otherwise quiet server too. `ttlMs` 0 or undefined: never.
 *
 * With several instances over one store (`live`), evicting a session here only frees this
 * instance's memory: a session is live while it is touched within the TTL on any instance, so
 * each sweep publishes the touches seen here since the last one (the store's `LiveSessions`).
 * A session with an open event stream is not idle there: streaming keeps it (`inUse`), so an
 * instance that only streams a session another instance runs does not end those streams
 * mid-turn (decision 0361).
 */
import type { SessionManager } from '../core/manager.ts'
import type { Logger } from '../log.ts'
import type { LiveSessions } from '../store/types.ts'

export const DEFAULT_SESSION_TTL_S = 3600

export class IdleEviction {
  readonly ttlMs: number
  readonly #manager: SessionManager
  readonly #logger: Logger
  readonly #throttleMs: number
  readonly #live: LiveSessions | undefined
  readonly #inUse: (sessionId: string) => boolean
  /** The last touch of each session published to `live`. */
  readonly #published = new Map<string, number>()
  #last = 0
  #timer: NodeJS.Timeout | undefined

  constructor(
    manager: SessionManager,
    ttlMs: number | undefined,
    logger: Logger,
    live?: LiveSessions,
    inUse: (sessionId: string) => boolean = () => false,
  ) {
    this.#manager = manager
    this.#logger = logger
    this.#live = live
    this.#inUse = inUse
    this.ttlMs = ttlMs !== undefined && Number.isFinite(ttlMs) && ttlMs > 0 ? ttlMs : 0
    this.#throttleMs = Math.min(1000, Math.max(1, this.ttlMs / 4 || 1000))
  }

  get enabled(): boolean {
    return this.ttlMs > 0
  }

  /** Evict what is idle, publish touches (throttled unless `force`). */
  sweep(force = false, now = Date.now()): void {
    if ((!this.enabled && !this.#live) || (!force && now - this.#last < this.#throttleMs)) return
    this.#last = now
    if (this.#live) this.#publish(this.#live)
    if (!this.enabled) return
    for (const s of this.#manager.evictIdle(this.ttlMs, now, this.#inUse))
      this.#logger.info(`session ${s.id} evicted after ${Math.round(this.ttlMs / 1000)} s idle`)
  }

  /** Touches of sessions in this instance's memory since the last sweep, to the shared store. */
  #publish(live: LiveSessions): void {
    const fresh = new Map<string, number>()
    const here = new Set<string>()
    for (const s of this.#manager.live()) {
      here.add(s.id)
      if (s.persist && s.lastTouched > (this.#published.get(s.id) ?? 0)) fresh.set(s.id, s.lastTouched)
    }
    for (const id of this.#published.keys()) if (!here.has(id)) this.#published.delete(id)
    if (fresh.size === 0) return
    for (const [id, at] of fresh) this.#published.set(id, at)
    void live.touched(fresh).catch((err: unknown) => this.#logger.debug('publishing session touches failed', err))
  }

  start(): void {
    if ((!this.enabled && !this.#live) || this.#timer) return
    const every = this.enabled ? Math.max(20, Math.min(60_000, this.ttlMs / 2)) : this.#throttleMs
    this.#timer = setInterval(() => this.sweep(true), every)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}
