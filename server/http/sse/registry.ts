/**
 * The open event streams of the process, by session: when a session leaves the manager
 * (deleted, evicted as idle) its streams end with `end`; at shutdown every stream does.
 *
 * Streams are limited so no one caller can take them all (docs/http.md "Stream limits"): a
 * session holds at most `perSession` streams and one bearer token at most `perToken` (both
 * for callers other than the master token), those callers hold at most `total` in all, and the
 * master token may go on to `masterTotal`: room kept for it above what session tokens can fill,
 * and below the connection cap, so plain requests (`/health`, the master token's) still get a
 * connection. A refused stream is `429 too_many_streams` with the limit that refused it.
 */
import { crypto } from '../../platform/builtins.ts'

export interface StreamLimits {
  perSession: number
  perToken: number
  total: number
  masterTotal: number
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { perSession: 32, perToken: 32, total: 512, masterTotal: 768 }

/** Who opens a stream: the master token, or another caller and the bearer token it presented (if any). */
export type StreamHolder = { master: true } | { master: false; token?: string }

export type Registration = { signal: AbortSignal; release: () => void }

export class StreamRegistry {
  readonly #bySession = new Map<string, Set<AbortController>>()
  readonly #limits: StreamLimits
  /** Streams of callers other than the master token: per session, per token digest, in all. */
  readonly #guestBySession = new Map<string, number>()
  readonly #byToken = new Map<string, number>()
  #guests = 0
  #all = 0

  constructor(limits: Partial<StreamLimits> = {}) {
    this.#limits = { ...DEFAULT_STREAM_LIMITS, ...limits }
  }

  /**
   * A stop signal for one new stream of `sessionId` (call `release` when the stream is over), or
   * why it is refused.
   */
  register(sessionId: string, holder: StreamHolder = { master: true }): Registration | { refused: string } {
    const l = this.#limits
    const tokenKey =
      !holder.master && holder.token !== undefined
        ? crypto().createHash('sha256').update(holder.token).digest('base64')
        : undefined
    if (holder.master) {
      if (this.#all >= l.masterTotal) return { refused: `the server holds ${this.#all} open event streams (its limit)` }
    } else {
      if (this.#guests >= l.total)
        return {
          refused: `the server holds ${this.#guests} open event streams for session tokens and open clients (its limit)`,
        }
      if ((this.#guestBySession.get(sessionId) ?? 0) >= l.perSession)
        return { refused: `this session already has ${l.perSession} open event streams (the limit per session)` }
      if (tokenKey !== undefined && (this.#byToken.get(tokenKey) ?? 0) >= l.perToken)
        return { refused: `this token already holds ${l.perToken} open event streams (the limit per token)` }
      this.#guests++
      bump(this.#guestBySession, sessionId, 1)
      if (tokenKey !== undefined) bump(this.#byToken, tokenKey, 1)
    }
    this.#all++
    const ctl = new AbortController()
    let set = this.#bySession.get(sessionId)
    if (!set) this.#bySession.set(sessionId, (set = new Set()))
    set.add(ctl)
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      this.#all--
      if (!holder.master) {
        this.#guests--
        bump(this.#guestBySession, sessionId, -1)
        if (tokenKey !== undefined) bump(this.#byToken, tokenKey, -1)
      }
      const s = this.#bySession.get(sessionId)
      if (!s) return
      s.delete(ctl)
      if (s.size === 0) this.#bySession.delete(sessionId)
    }
    return { signal: ctl.signal, release }
  }

  /** End every stream of a session. */
  end(sessionId: string): void {
    const set = this.#bySession.get(sessionId)
    if (!set) return
    this.#bySession.delete(sessionId)
    for (const c of set) c.abort()
  }

  endAll(): void {
    for (const id of [...this.#bySession.keys()]) this.end(id)
  }

  /** Open streams of a session (or of all sessions). */
  count(sessionId?: string): number {
    if (sessionId !== undefined) return this.#bySession.get(sessionId)?.size ?? 0
    let n = 0
    for (const s of this.#bySession.values()) n += s.size
    return n
  }
}

function bump(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by
  if (n <= 0) m.delete(key)
  else m.set(key, n)
}
