/**
 * The gap-free catch-up-plus-live stream every store offers (`EventStore.stream`): the events
 * persisted after a cursor, then live ones as they are persisted, each exactly once and in
 * `seq` order, whatever lands while the catch-up read is in flight.
 *
 * How: subscribe first (live events go to a bounded buffer), then read what is persisted after
 * the cursor (from the store's ring of recent events when the cursor is inside it, else from
 * storage), then drain the buffer, skipping what the read already delivered. A consumer that
 * falls behind by more than `highWaterMark` events loses its buffer, not events: the stream
 * goes back to catch-up from its cursor (everything it missed is persisted), so memory stays
 * bounded and nothing is skipped or repeated. A store may serve catch-up reads in pages (the
 * file store does), so replaying a long session never holds all of it in memory for one
 * consumer. This is the shape a Redis Streams store
 * (`XREAD BLOCK` from an id) or a PostgreSQL store (`LISTEN` + select after an id) implements.
 */
import type { AnyEvent } from '../events/event-types.ts'
import type { EventListener, StreamOptions } from './types.ts'

/** What a store provides for streaming. */
export interface StreamSource {
  subscribe(sessionId: string, listener: EventListener): () => void
  /**
   * Persisted events with `seq > afterSeq`: all of them, or a page of the first ones with
   * `more` set when the store stopped before the end of what is persisted.
   */
  read(sessionId: string, afterSeq: number): Promise<{ events: AnyEvent[]; more: boolean }>
  /** Events with `seq > afterSeq` from memory, when the store still holds all of them. */
  recent?(sessionId: string, afterSeq: number): AnyEvent[] | undefined
}

/** Live events buffered per stream before it falls back to catch-up reads. */
export const STREAM_HIGH_WATER_MARK = 1024

export async function* streamEvents(
  src: StreamSource,
  sessionId: string,
  opts: StreamOptions = {},
): AsyncGenerator<AnyEvent> {
  const signal = opts.signal
  const hwm = opts.highWaterMark ?? STREAM_HIGH_WATER_MARK
  let cursor = opts.afterSeq ?? 0
  if (!Number.isSafeInteger(cursor) || cursor < 0)
    throw new RangeError(`afterSeq must be a non-negative integer, got ${cursor}`)
  let buffer: AnyEvent[] = []
  let behind = true // true: the next items come from a catch-up read
  let wake: (() => void) | undefined
  const notify = (): void => {
    const w = wake
    wake = undefined
    w?.()
  }
  const unsubscribe = src.subscribe(sessionId, (e) => {
    if (behind || e.seq <= cursor) return
    if (buffer.length >= hwm) {
      // Too far behind: drop the buffer and catch up from storage later.
      buffer = []
      behind = true
    } else buffer.push(e)
    notify()
  })
  const onAbort = (): void => notify()
  signal?.addEventListener('abort', onAbort)
  try {
    while (!signal?.aborted) {
      if (behind) {
        // Subscribed (above) before reading, so nothing persisted from here on is missed.
        behind = false
        buffer = []
        const recent = src.recent?.(sessionId, cursor)
        const page = recent ? { events: recent, more: false } : await src.read(sessionId, cursor)
        const caught = page.events
        const before = cursor
        const first = caught[0]
        if (first && first.seq > cursor + 1) {
          // The store no longer holds the events after the cursor (a bounded memory store).
          opts.onGap?.(cursor + 1, first.seq - 1)
          cursor = first.seq - 1
        }
        for (const e of caught) {
          if (e.seq !== cursor + 1) continue
          cursor = e.seq
          yield e
          if (signal?.aborted) return
          if (behind) break
        }
        // More persisted after this page: read on (live events meanwhile are persisted too).
        if (page.more && cursor > before) behind = true
        continue
      }
      if (buffer.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve
        })
        continue
      }
      const e = buffer.shift()!
      if (e.seq <= cursor) continue
      if (e.seq !== cursor + 1) {
        // A gap means the buffer missed something: read it back from storage.
        behind = true
        continue
      }
      cursor = e.seq
      yield e
    }
  } finally {
    signal?.removeEventListener('abort', onAbort)
    unsubscribe()
    notify()
  }
}
