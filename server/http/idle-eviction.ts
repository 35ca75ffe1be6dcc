/**
 * TTL eviction of idle sessions (docs/http.md "TTL eviction"): a session untouched for `ttlMs` is
 * evicted — its running turn cancelled, pending permissions released (the manager's evict
 * listeners, which end its SSE streams) — and a persisted one can still be listed and shown from
 * disk. With several instances over one store, a session with an open event stream is not idle:
 * streaming keeps it (`inUse`), so an instance that only streams a session another instance runs
 * does not end those streams mid-turn (decision 0361). Eviction is
 * opportunistic (every request sweeps first, at most once per `throttleMs`) and a timer sweeps
 * an otherwise quiet server too. `ttlMs` 0 or undefined: never.
 */
import type { SessionManager } from '../core/manager.ts'
import type { Logger } from '../log.ts'

export const DEFAULT_SESSION_TTL_S = 3600

export class IdleEviction {
  readonly ttlMs: number
  readonly #manager: SessionManager
  readonly #logger: Logger
  readonly #throttleMs: number
  readonly #inUse: (sessionId: string) => boolean
  #last = 0
  #timer: NodeJS.Timeout | undefined

  constructor(
    manager: SessionManager,
    ttlMs: number | undefined,
    logger: Logger,
    inUse: (sessionId: string) => boolean = () => false,
  ) {
    this.#manager = manager
    this.#logger = logger
    this.#inUse = inUse
    this.ttlMs = ttlMs !== undefined && Number.isFinite(ttlMs) && ttlMs > 0 ? ttlMs : 0
    this.#throttleMs = Math.min(1000, Math.max(1, this.ttlMs / 4))
  }

  get enabled(): boolean {
    return this.ttlMs > 0
  }

  /** Evict what is idle (throttled unless `force`). */
  sweep(force = false, now = Date.now()): void {
    if (!this.enabled || (!force && now - this.#last < this.#throttleMs)) return
    this.#last = now
    for (const s of this.#manager.evictIdle(this.ttlMs, now, this.#inUse))
      this.#logger.info(`session ${s.id} evicted after ${Math.round(this.ttlMs / 1000)} s idle`)
  }

  start(): void {
    if (!this.enabled || this.#timer) return
    this.#timer = setInterval(() => this.sweep(true), Math.max(20, Math.min(60_000, this.ttlMs / 2)))
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}
