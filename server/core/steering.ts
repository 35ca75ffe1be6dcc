/**
 * Steering of a session's running turn: messages sent while it runs, injected before its next
 * model call. Open from the turn's start until the turn decides to finish (a later steer would
 * be lost), so a waiting message makes the turn call the model again.
 */
export class Steering {
  #waiting: string[] = []
  #open = false

  /** True while a steer reaches the running turn. */
  get open(): boolean {
    return this.#open
  }

  /** A turn starts: steering opens. */
  start(): void {
    this.#open = true
  }

  /** The turn ended: steering closes and what was not taken is dropped. */
  end(): void {
    this.#open = false
    this.#waiting = []
  }

  /** Queue `text` for the running turn (only while open). */
  push(text: string): void {
    this.#waiting.push(text)
  }

  /** The waiting messages, removed. */
  take(): string[] {
    return this.#waiting.splice(0)
  }

  /** The model has finished: true (and steering closes) when the turn may end; false when a message waits. */
  finish(): boolean {
    if (this.#waiting.length > 0) return false
    this.#open = false
    return true
  }
}
