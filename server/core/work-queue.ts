/**
 * A session's work queue: turns, slash commands and undo/redo run one at a time, in the order
 * they were queued. The pump runs what is queued (after a one-time preparation, when there is
 * one) and tells whoever waits for the session to be idle when the queue is empty.
 */
import type { QueuedPrompt } from '../store/types.ts'

export interface Work {
  run(): Promise<void>
  cancelQueued(): void
  /** An accepted prompt: its queue entry and the write that recorded it. */
  prompt?: { entry: QueuedPrompt; accepted: Promise<void> }
}

export interface WorkQueueHooks {
  /** Runs before the pump's first work (once it returns a promise, the pump waits for it). */
  before(): Promise<void> | undefined
  /** Runs when the pump has emptied the queue, before idle waiters are told. */
  drained(): void
}

export class WorkQueue {
  #queue: Work[] = []
  #pumping = false
  #idleWaiters: (() => void)[] = []
  readonly #hooks: WorkQueueHooks

  constructor(hooks: WorkQueueHooks) {
    this.#hooks = hooks
  }

  /** Work waiting to run (not counting the running one). */
  get length(): number {
    return this.#queue.length
  }

  /** Work is running or waiting: work pushed now would not start at once. */
  get busy(): boolean {
    return this.#pumping || this.#queue.length > 0
  }

  /** Add work behind what is queued; starts the pump when it is not running. */
  push(work: Work): void {
    this.#queue.push(work)
    if (!this.#pumping) void this.#pump()
  }

  /** Take every queued (not yet running) work out of the queue. */
  drain(): Work[] {
    return this.#queue.splice(0)
  }

  /** Resolves when no work is running or queued. */
  idle(): Promise<void> {
    if (!this.#pumping && this.#queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  async #pump(): Promise<void> {
    this.#pumping = true
    const before = this.#hooks.before()
    if (before) await before
    while (this.#queue.length) {
      const next = this.#queue.shift()!
      await next.run()
    }
    this.#hooks.drained()
    this.#pumping = false
    for (const w of this.#idleWaiters.splice(0)) w()
  }
}
