/**
 * Per-session subscriber lists. Notification is synchronous and in registration order; a
 * listener that throws (or returns a promise that rejects) is logged and never disturbs the
 * append that triggered it or the other listeners.
 */
import type { AnyEvent } from '../events/event-types.ts'
import type { Logger } from '../log.ts'
import type { EventListener } from './types.ts'

/** The subscribers of every session of one store. */
export class ListenerRegistry {
  readonly #bySession = new Map<string, Set<EventListener>>()
  readonly #logger: Logger

  constructor(logger: Logger) {
    this.#logger = logger
  }

  /** Add `listener` for `sessionId`; the returned function removes it (idempotent). */
  add(sessionId: string, listener: EventListener): () => void {
    let set = this.#bySession.get(sessionId)
    if (!set) this.#bySession.set(sessionId, (set = new Set()))
    // Wrap so the same function subscribed twice is called twice and unsubscribes independently.
    const entry: EventListener = (e) => listener(e)
    set.add(entry)
    return () => {
      const s = this.#bySession.get(sessionId)
      if (!s) return
      s.delete(entry)
      if (s.size === 0) this.#bySession.delete(sessionId)
    }
  }

  /** True while `sessionId` has a listener. */
  has(sessionId: string): boolean {
    return this.#bySession.has(sessionId)
  }

  /** Call every listener of the event's session with it. */
  notify(event: AnyEvent): void {
    const set = this.#bySession.get(event.session_id)
    if (!set) return
    for (const listener of [...set]) {
      try {
        const r: unknown = listener(event)
        if (r instanceof Promise) r.catch((err: unknown) => this.#failed(event, err))
      } catch (err) {
        this.#failed(event, err)
      }
    }
  }

  #failed(event: AnyEvent, err: unknown): void {
    this.#logger.error('event listener failed', {
      session_id: event.session_id,
      seq: event.seq,
      error: err instanceof Error ? err.message : String(err),
    })
  }
}
