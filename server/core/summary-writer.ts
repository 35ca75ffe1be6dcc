/**
 * When a session's `summary.json` (the spec's `SessionSummary`: what a listing shows of a session
 * not loaded) is written (docs/decisions/0495-turn-summaries-coalesced.md).
 *
 * - A point that changes the listing besides a turn's end (model change, compaction, undo, redo,
 *   rename) is written at once: `now()`.
 * - A turn's end is written `TURN_SUMMARY_DELAY_MS` later, one write for every turn that ends
 *   meanwhile: a session driven turn after turn (an editor's or a script's prompts, answered in a
 *   millisecond or two) does not rewrite the file after each. Instances sharing a store write it
 *   at once (`delayMs: 0`): another instance lists the session.
 * - `settled()` writes a due summary at once and resolves when the write covering the last turn's
 *   end is done: what a client is told about a turn's end waits for it (`Session.idle()`, an HTTP
 *   stream's terminal record), so another instance's listing is current by the time it hears.
 * - After `close()` nothing is delayed; after `drop()` (a copy that lost the session to another
 *   instance) nothing is written.
 *
 * Writes never reject (a failure is reported to `failed` and the next request writes again), and
 * a write asked for at the event counter of the last one begun joins it: the summary changes only
 * with events.
 */

/** How long after a turn ends its summary is written. */
export const TURN_SUMMARY_DELAY_MS = 25

export interface SummaryWriterOptions {
  /** How long after a turn's end it is written (default `TURN_SUMMARY_DELAY_MS`; 0: at once). */
  delayMs?: number
  /** The session's event counter now (the summary written is the one of this moment). */
  seq(): number
  /** Write the summary of this moment (the store's `writeSummary`). */
  write(): Promise<void>
  /** A write failed (it is written again at the next request). */
  failed(err: unknown): void
}

export class SummaryWriter {
  readonly #o: SummaryWriterOptions
  readonly #delayMs: number
  /** The last write begun, and the event counter it was taken at. */
  #last: { seq: number; done: Promise<void> } | undefined
  /** Writes under way (`flush` waits for them). */
  readonly #writes = new Set<Promise<void>>()
  /** The write due after a turn's end, not begun yet. */
  #due: NodeJS.Timeout | undefined
  /** The counter of the last turn's terminal event (0: no turn ended in this copy). */
  #turnEnd = 0
  #closed = false
  #dropped = false

  constructor(o: SummaryWriterOptions) {
    this.#o = o
    this.#delayMs = o.delayMs ?? TURN_SUMMARY_DELAY_MS
  }

  /** Write now (a due write is this one). */
  now(): Promise<void> {
    this.#cancelDue()
    if (this.#dropped) return Promise.resolve()
    const seq = this.#o.seq()
    if (this.#last?.seq === seq) return this.#last.done
    const write = { seq, done: Promise.resolve() }
    // Begun now, not deferred: the store counts it at once among the session's summary writes,
    // which a release waits for (a write begun after the release would open the session again).
    write.done = this.#o
      .write()
      .catch((err: unknown) => {
        this.#o.failed(err)
        if (this.#last === write) this.#last = undefined
      })
      .finally(() => this.#writes.delete(write.done))
    this.#last = write
    this.#writes.add(write.done)
    return write.done
  }

  /** A turn ended with the event at `seq`: its summary is written after the delay (at once once closed). */
  turnEnded(seq: number): void {
    this.#turnEnd = Math.max(this.#turnEnd, seq)
    if (this.#closed || this.#delayMs === 0) return void this.now()
    if (this.#due || this.#dropped) return
    this.#due = setTimeout(() => {
      this.#due = undefined
      void this.now()
    }, this.#delayMs)
  }

  /**
   * Resolves when the write covering the last turn's end is done (begun now if it was due, or
   * failed before the session was closed: a closed session may have been let go by the store,
   * which a write would open again).
   */
  settled(): Promise<void> {
    if (this.#dropped) return Promise.resolve()
    const last = this.#last
    const owed = this.#turnEnd > 0 && (last === undefined || last.seq < this.#turnEnd)
    if (this.#due || (owed && !this.#closed)) return this.now()
    return last?.done ?? Promise.resolve()
  }

  /** Resolves when every write begun is done, a due one begun now. */
  async flush(): Promise<void> {
    if (this.#due) void this.now()
    await Promise.all(this.#writes)
  }

  /** The session is going: a due write is begun now, and nothing is delayed from here on. */
  close(): void {
    this.#closed = true
    if (this.#due) void this.now()
  }

  /** The copy no longer holds the session (another instance runs it): nothing more is written. */
  drop(): void {
    this.#dropped = true
    this.#cancelDue()
  }

  #cancelDue(): void {
    clearTimeout(this.#due)
    this.#due = undefined
  }
}
