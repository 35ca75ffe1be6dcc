/**
 * Steering of a session's running turn: messages sent while it runs, injected before its next
 * model call. Open from the turn's start until the turn decides to finish (a later steer would
 * be lost), so a waiting message makes the turn call the model again.
 *
 * A steer is acknowledged once its queue entry is on disk (prompt-ledger.ts), so a waiting
 * message carries the promise of that write: the turn takes only messages whose entry was
 * written, and waits for writes still under way before its next model call.
 */

import type { QueuedPrompt } from '../store/types.ts'

/** A steering message, its queue entry and that entry's write (true once on disk, false when refused). */
export interface SteerMessage {
  readonly id: string
  readonly text: string
  readonly entry: QueuedPrompt
  readonly written: Promise<boolean>
}

export class Steering {
  #waiting: SteerMessage[] = []
  #open = false

  /** True while a steer reaches the running turn. */
  get open(): boolean {
    return this.#open
  }

  /** A turn starts: steering opens. */
  start(): void {
    this.#open = true
  }

  /** The turn ended: steering closes; the messages not taken are returned (dropped). */
  end(): SteerMessage[] {
    this.#open = false
    return this.#waiting.splice(0)
  }

  /** Queue a message for the running turn (only while open). */
  push(message: SteerMessage): void {
    this.#waiting.push(message)
  }

  /**
   * The waiting messages whose entries are on disk, removed, in the order they were sent. Waits
   * for writes under way; a message whose write was refused is dropped (its sender was told).
   */
  async take(): Promise<SteerMessage[]> {
    if (this.#waiting.length === 0) return []
    const batch = this.#waiting.slice()
    const written = await Promise.all(batch.map((m) => m.written))
    this.#waiting = this.#waiting.filter((m) => !batch.includes(m))
    return batch.filter((_, i) => written[i])
  }

  /** The model has finished: true (and steering closes) when the turn may end; false when a message waits. */
  finish(): boolean {
    if (this.#waiting.length > 0) return false
    this.#open = false
    return true
  }
}
