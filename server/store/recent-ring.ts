/**
 * A bounded ring of a session's most recent events (by count and by bytes), so a resume from a
 * recent cursor is served from memory instead of re-reading the session directory. Only events
 * the store has persisted go in; the ring is contiguous (it is reset if an event would not
 * follow its last one).
 */
import type { AnyEvent } from '../events/event-types.ts'

export const RING_MAX_EVENTS = 512
export const RING_MAX_BYTES = 2 * 1024 * 1024

export class RecentRing {
  readonly #events: AnyEvent[] = []
  readonly #sizes: number[] = []
  #bytes = 0
  readonly #maxEvents: number
  readonly #maxBytes: number

  constructor(opts: { maxEvents?: number; maxBytes?: number } = {}) {
    this.#maxEvents = opts.maxEvents ?? RING_MAX_EVENTS
    this.#maxBytes = opts.maxBytes ?? RING_MAX_BYTES
  }

  /** Most events held. */
  get capacity(): number {
    return this.#maxEvents
  }

  /** Add the next persisted event (`size`: its serialised length). */
  push(e: AnyEvent, size: number): void {
    const last = this.#events.at(-1)
    if (last && e.seq !== last.seq + 1) this.clear()
    this.#events.push(e)
    this.#sizes.push(size)
    this.#bytes += size
    while (this.#events.length > 1 && (this.#events.length > this.#maxEvents || this.#bytes > this.#maxBytes)) {
      this.#events.shift()
      this.#bytes -= this.#sizes.shift()!
    }
  }

  /** Events with `seq > afterSeq` when the ring holds all of them, else undefined. */
  after(afterSeq: number): AnyEvent[] | undefined {
    const first = this.#events[0]
    if (!first) return undefined
    if (afterSeq < first.seq - 1) return undefined
    return this.#events.slice(Math.max(0, afterSeq - first.seq + 1))
  }

  clear(): void {
    this.#events.length = 0
    this.#sizes.length = 0
    this.#bytes = 0
  }
}
