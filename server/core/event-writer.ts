/**
 * The one write path of a session's events. Every event — awaited by the loop, fired from a
 * tool callback, or coalesced from a stream — goes through one promise chain per session:
 * the next `seq` is taken when the write runs, the store's append must resolve, and only then
 * is the event folded into the session state (so the state never holds what the log does not,
 * and a failed append leaves the counter where it was: the log stays an exact prefix and the
 * next write continues it).
 *
 * Streamed text, reasoning and tool progress are coalesced: the first chunk of a stream goes
 * out at once; chunks arriving within FLUSH_MS of the last write of that stream are merged and
 * written when FLUSH_MS has passed, when FLUSH_BYTES have gathered, or before any other event
 * (order is kept). A call persists at most PROGRESS_CAP_BYTES of progress; the event that
 * reaches the cap is marked `truncated` and later output is dropped from the log (the tool
 * result keeps the tail). Within one merged progress event stdout and stderr are kept apart,
 * so their relative order inside that window is not recorded.
 *
 * A fire-and-forget write that fails is logged and reported once as a `notice` (level `error`)
 * when the store accepts writes again; an awaited write that fails throws `EventLogError` to its
 * caller. The report is not an `error` event: `error` ends a turn (specs/schemas/events.yaml
 * `x-turn-ending`), and the turn goes on (decision 0360).
 *
 * A failed append may have been kept after all: the store got it and its answer was lost with
 * the connection (a Redis restart). The next append at that `seq` then meets `seq_mismatch`; if
 * the event the log holds there is one this writer failed to write, it is taken as written
 * (folded into the state, its loss not reported) and the append goes on at the next `seq`, so the
 * session never stays stuck one event behind its own log (decision 0360).
 */
import { randomUUID } from 'node:crypto'
import { ChimeraError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { EventStore } from '../store/types.ts'
import { checkEventData, type AnyEvent, type EventData, type EventOf, type EventType } from '../events/event-types.ts'
import { reduce, type SessionState } from './state.ts'

export const FLUSH_MS = 50
export const FLUSH_BYTES = 16 * 1024
export const PROGRESS_CAP_BYTES = 1024 * 1024
/** Failed appends remembered at one `seq` (the first ones: a lost answer comes before the refusals). */
const MAX_FAILED_IDS = 64
/** Writes queued before a coalescing producer is made to wait (backpressure). */
const MAX_QUEUED = 8

/** The event log refused a write (disk full, read-only home, a failing engine). */
export class EventLogError extends Error {
  override name = 'EventLogError'
  constructor(type: EventType, cause: unknown) {
    super(`event log write failed (${type} not recorded): ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    })
  }
}

type Streamed = 'text_delta' | 'reasoning' | 'tool_progress'
type Pending = { type: Streamed; key: string; data: Record<string, unknown>; bytes: number }

export interface WriterOptions {
  store: EventStore
  state: SessionState
  sessionId: string
  logger: Logger
  /** Called after each event is persisted and folded into the state. */
  onEvent(e: AnyEvent): void
}

export class EventWriter {
  readonly #o: WriterOptions
  #chain: Promise<unknown> = Promise.resolve()
  #queued = 0
  #pending: Pending | undefined
  #timer: NodeJS.Timeout | undefined
  readonly #lastWrite = new Map<string, number>()
  readonly #progress = new Map<string, { bytes: number; capped: boolean }>()
  /** A fire-and-forget write failed and has not been reported yet. */
  #unreported: EventLogError | undefined
  /** The events that failed to append at `seq` (the next one): the log may hold one of them. */
  #failedAt: { seq: number; ids: Map<string, EventLogError> } | undefined

  constructor(o: WriterOptions) {
    this.#o = o
  }

  /** Append one event; resolves with it once persisted (throws EventLogError if not). */
  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>> {
    const checked = checkEventData(type, data)
    this.#flushPending()
    return this.#enqueue(type, checked) as Promise<EventOf<T>>
  }

  /** Append without waiting: a failure is logged and reported as an `error` event later. */
  post<T extends EventType>(type: T, data: EventData<T>): void {
    this.emit(type, data).catch((err: unknown) => this.#failed(err))
  }

  /**
   * A chunk of streamed text or reasoning (`key`: the step) or tool progress (`key`: the
   * call). Resolves when the producer may go on (after the write when it was written at once,
   * or at once when buffered — unless too many writes are queued).
   */
  stream(type: Streamed, key: string, data: Record<string, unknown>): Promise<void> {
    if (type === 'tool_progress' && !this.#admitProgress(key, data)) return Promise.resolve()
    const p = this.#pending
    if (p && p.type === type && p.key === key && !(type === 'reasoning' && p.data.signature !== undefined)) {
      merge(p, data)
      if (p.bytes >= FLUSH_BYTES || p.data.truncated === true || data.signature !== undefined) this.#flushPending()
      return this.#backpressure()
    }
    this.#flushPending()
    const last = this.#lastWrite.get(`${type}:${key}`) ?? 0
    const item: Pending = { type, key, data: { ...data }, bytes: sizeOf(data) }
    if (
      Date.now() - last >= FLUSH_MS ||
      item.bytes >= FLUSH_BYTES ||
      data.truncated === true ||
      data.signature !== undefined
    ) {
      return this.#write(item).then(
        () => undefined,
        (err: unknown) => this.#failed(err),
      )
    }
    this.#pending = item
    this.#timer = setTimeout(() => this.#flushPending(), FLUSH_MS - (Date.now() - last))
    return this.#backpressure()
  }

  /** Resolves when every write queued so far has settled. */
  async settled(): Promise<void> {
    this.#flushPending()
    await this.#chain
  }

  #admitProgress(callId: string, data: Record<string, unknown>): boolean {
    const seen = this.#progress.get(callId) ?? { bytes: 0, capped: false }
    this.#progress.set(callId, seen)
    if (seen.capped) return false
    seen.bytes += sizeOf(data)
    if (seen.bytes >= PROGRESS_CAP_BYTES) {
      seen.capped = true
      data.truncated = true
    }
    return true
  }

  #flushPending(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    const p = this.#pending
    if (!p) return
    this.#pending = undefined
    this.#write(p).catch((err: unknown) => this.#failed(err))
  }

  #write(p: Pending): Promise<AnyEvent> {
    this.#lastWrite.set(`${p.type}:${p.key}`, Date.now())
    return this.#enqueue(p.type, checkEventData(p.type, p.data))
  }

  #backpressure(): Promise<void> {
    return this.#queued > MAX_QUEUED ? this.#chain.then(() => undefined) : Promise.resolve()
  }

  #enqueue(type: EventType, data: unknown): Promise<AnyEvent> {
    this.#queued++
    const run = this.#chain.then(() => this.#append(type, data))
    const done = (): void => {
      this.#queued--
    }
    this.#chain = run.then(done, done)
    return run
  }

  async #append(type: EventType, data: unknown): Promise<AnyEvent> {
    const s = this.#o.state
    const event = {
      seq: s.lastSeq + 1,
      id: `evt-${randomUUID()}`,
      session_id: this.#o.sessionId,
      type,
      // A turn's user_message and turn_start open turn N (= turns so far); later events belong to it.
      turn: type === 'user_message' || type === 'turn_start' ? s.turns : Math.max(0, s.turns - 1),
      ts: new Date().toISOString(),
      data,
    } as AnyEvent
    try {
      await this.#o.store.append(event)
    } catch (err) {
      if (await this.#keptAfterAll(err, event.seq)) return this.#append(type, data)
      const e = err instanceof EventLogError ? err : new EventLogError(type, err)
      if (this.#failedAt?.seq !== event.seq) this.#failedAt = { seq: event.seq, ids: new Map() }
      if (this.#failedAt.ids.size < MAX_FAILED_IDS) this.#failedAt.ids.set(event.id, e)
      throw e
    }
    this.#failedAt = undefined
    reduce(s, event)
    this.#o.onEvent(event)
    if (this.#unreported && type !== 'error') this.#report()
    return event
  }

  /**
   * After `seq_mismatch` at `seq`: true when the log's event at `seq` is one this writer failed
   * to write (its answer was lost, not the write), now folded in as written.
   */
  async #keptAfterAll(err: unknown, seq: number): Promise<boolean> {
    const failed = this.#failedAt
    if (failed?.seq !== seq || !(err instanceof ChimeraError) || err.code !== 'seq_mismatch') return false
    let there: AnyEvent | undefined
    try {
      there = (await this.#o.store.read(this.#o.sessionId, seq - 1))[0]
    } catch {
      return false // unknown still: asked again at the next mismatch
    }
    this.#failedAt = undefined
    const lost = there && failed.ids.get(there.id)
    if (!there || !lost || there.seq !== seq) return false
    this.#o.logger.info(
      `session ${this.#o.sessionId}: event ${seq} (${there.type}) was kept although its write failed (${lost.message}); taken as written`,
    )
    // Its failure was the only one: nothing was lost after all.
    if (failed.ids.size === 1 && this.#unreported === lost) this.#unreported = undefined
    reduce(this.#o.state, there)
    this.#o.onEvent(there)
    return true
  }

  #failed(err: unknown): void {
    const e = err instanceof EventLogError ? err : new EventLogError('notice', err)
    this.#o.logger.error(`session ${this.#o.sessionId}: ${e.message}`)
    this.#unreported ??= e
  }

  /** The store accepts writes again: record that something was lost before (the turn goes on). */
  #report(): void {
    const e = this.#unreported!
    this.#unreported = undefined
    void this.#enqueue('notice', checkEventData('notice', { level: 'error', text: e.message })).catch(() => {
      this.#unreported ??= e
    })
  }
}

function sizeOf(data: Record<string, unknown>): number {
  let n = 0
  for (const k of ['text', 'stdout', 'stderr'] as const)
    if (typeof data[k] === 'string') n += (data[k] as string).length
  return n
}

function merge(p: Pending, data: Record<string, unknown>): void {
  for (const k of ['text', 'stdout', 'stderr'] as const) {
    if (typeof data[k] === 'string') p.data[k] = `${(p.data[k] as string | undefined) ?? ''}${data[k] as string}`
  }
  if (data.signature !== undefined) p.data.signature = data.signature
  if (data.truncated === true) p.data.truncated = true
  p.bytes = sizeOf(p.data)
}
