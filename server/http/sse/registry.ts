/**
 * The open event streams of the process, by session: when a session leaves the manager
 * (deleted, evicted as idle) its streams end with `end`; at shutdown every stream does.
 */
export class StreamRegistry {
  readonly #bySession = new Map<string, Set<AbortController>>()

  /** A stop signal for one new stream of `sessionId`; call `release` when the stream is over. */
  register(sessionId: string): { signal: AbortSignal; release: () => void } {
    const ctl = new AbortController()
    let set = this.#bySession.get(sessionId)
    if (!set) this.#bySession.set(sessionId, (set = new Set()))
    set.add(ctl)
    const release = (): void => {
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
