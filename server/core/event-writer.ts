/**
 * The one write path of a session's events. Every event — awaited by the loop (`emit`),
 * recorded by it without waiting (`record`), fired from a tool callback (`post`), or coalesced
 * from a stream — goes through one queue per session, written a group at a time (group commit,
 * docs/decisions/0385-group-commit.md): the events queued in one tick, and those queued while a
 * group is being written, go to the store together (`appendMany`). The next `seq` is taken when
 * a group is written, the store's append must resolve, and only then is an event folded into the
 * session state (so the state never holds what the log does not, and a failed append leaves the
 * counter where it was: the log stays an exact prefix and the next write continues it).
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
 * caller; a recorded one that fails throws it from the next `emit` or `barrier`, and the recorded
 * events queued after it are not written. The report is not an `error` event: `error` ends a turn
 * (specs/schemas/events.yaml `x-turn-ending`), and the turn goes on (decision 0360).
 *
 * A failed append may have been kept after all: the store got it and its answer was lost with
 * the connection (a Redis restart). The next append at that `seq` then meets `seq_mismatch`; if
 * the event the log holds there is one this writer failed to write, it is taken as written
 * (folded into the state, its loss not reported) and the group is written again at the next
 * `seq`, so the session never stays stuck one event behind its own log (decision 0360).
 */
import { randomUUID } from '../platform/random.ts'
import { ChimeraError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { AppendGroupError, type EventStore } from '../store/types.ts'
import { builtEvent } from '../store/validate.ts'
import { checkEventData, type AnyEvent, type EventData, type EventOf, type EventType } from '../events/event-types.ts'
import { reduce, type SessionState } from './state.ts'

export const FLUSH_MS = 50
export const FLUSH_BYTES = 16 * 1024
export const PROGRESS_CAP_BYTES = 1024 * 1024
/** Failed appends remembered at one `seq` (the first ones: a lost answer comes before the refusals). */
const MAX_FAILED_IDS = 64
/** Writes queued before a coalescing producer is made to wait (backpressure). */
const MAX_QUEUED = 8
/** Events written in one group commit at most. */
const MAX_GROUP = 256

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

type Item = {
  type: EventType
  data: unknown
  /**
   * `awaited` (`emit`: the caller gets the result), `recorded` (`record`: a failure is held for
   * the next `emit` or `barrier`) or `posted` (`post`, streamed chunks: a failure is reported later).
   */
  kind: 'awaited' | 'recorded' | 'posted'
  resolve(e: AnyEvent): void
  reject(err: unknown): void
  /** Resolved or rejected already. */
  settled?: boolean
}

export class EventWriter {
  readonly #o: WriterOptions
  /** Events waiting for the next group commit, in order. */
  #items: Item[] = []
  /** Writes queued and not yet settled (waiting or in the group being written). */
  #queued = 0
  /** The running drain: resolves when nothing is left to write. */
  #draining: Promise<void> | undefined
  #pending: Pending | undefined
  #timer: NodeJS.Timeout | undefined
  readonly #lastWrite = new Map<string, number>()
  readonly #progress = new Map<string, { bytes: number; capped: boolean }>()
  /** A fire-and-forget write failed and has not been reported yet. */
  #unreported: EventLogError | undefined
  /** A recorded (pipelined) write failed: the next `emit` or `barrier` throws it. */
  #pipelineError: EventLogError | undefined
  /** The events that failed to append at `seq` (the next one): the log may hold one of them. */
  #failedAt: { seq: number; ids: Map<string, EventLogError> } | undefined
  /** Why nothing more is written (the session's copy gave it up): every later group fails with it. */
  #fence: Error | undefined

  constructor(o: WriterOptions) {
    this.#o = o
  }

  /** Append one event; resolves with it once persisted (throws EventLogError if not, or if a recorded event failed). */
  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>> {
    const checked = checkEventData(type, data)
    this.#flushPending()
    const failed = this.#takePipelineError()
    if (failed) return Promise.reject(failed)
    return this.#enqueue(type, checked, 'awaited') as Promise<EventOf<T>>
  }

  /**
   * Append one event without waiting for it: it is written with the events around it in one
   * group commit. If it cannot be written, it and the recorded events after it are not, and the
   * next `emit` or `barrier` throws the EventLogError.
   */
  record<T extends EventType>(type: T, data: EventData<T>): void {
    const checked = checkEventData(type, data)
    this.#flushPending()
    this.#enqueue(type, checked, 'recorded').catch(() => {
      // Held in #pipelineError by the drain.
    })
  }

  /** Write nothing from now on: each event not written yet fails with `err` (a group under way ends). */
  fence(err: Error): void {
    this.#fence ??= err
  }

  /** Resolves once everything queued so far is persisted; throws a recorded event's EventLogError. */
  async barrier(): Promise<void> {
    await this.settled()
    const failed = this.#takePipelineError()
    if (failed) throw failed
  }

  /** Append without waiting: a failure is logged and reported as an `error` event later. */
  post<T extends EventType>(type: T, data: EventData<T>): void {
    const checked = checkEventData(type, data)
    this.#flushPending()
    this.#enqueue(type, checked, 'posted').catch((err: unknown) => this.#failed(err))
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
      this.#write(item).catch((err: unknown) => this.#failed(err))
      return this.#backpressure()
    }
    this.#pending = item
    this.#timer = setTimeout(() => this.#flushPending(), FLUSH_MS - (Date.now() - last))
    return this.#backpressure()
  }

  /** Resolves when every write queued so far has settled. */
  async settled(): Promise<void> {
    this.#flushPending()
    while (this.#draining) await this.#draining
  }

  #takePipelineError(): EventLogError | undefined {
    const e = this.#pipelineError
    this.#pipelineError = undefined
    return e
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
    return this.#enqueue(p.type, checkEventData(p.type, p.data), 'posted')
  }

  #backpressure(): Promise<void> {
    return this.#queued > MAX_QUEUED ? this.settled() : Promise.resolve()
  }

  #enqueue(type: EventType, data: unknown, kind: Item['kind']): Promise<AnyEvent> {
    return new Promise<AnyEvent>((resolve, reject) => {
      this.#queued++
      this.#items.push({ type, data, kind, resolve, reject })
      this.#draining ??= this.#drain()
    })
  }

  /**
   * Write what is queued, a group at a time: the events queued in the same tick, and then those
   * queued while a group was being written, go to the store together (one group commit).
   */
  async #drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve))
    try {
      while (this.#items.length > 0) {
        const group = this.#items.splice(0, MAX_GROUP)
        try {
          await this.#commit(group)
        } catch (err) {
          // A bug past the store (a reducer, a listener): the group's producers hear of it and
          // the writer goes on, rather than every later write waiting forever.
          this.#o.logger.error(`session ${this.#o.sessionId}: event write failed`, err)
          this.#items = this.#items.filter((it) => !group.includes(it))
          for (const it of group) this.#settle(it, undefined, err)
        }
      }
    } finally {
      this.#draining = undefined
    }
  }

  async #commit(group: Item[]): Promise<void> {
    const s = this.#o.state
    const live: Item[] = []
    for (const it of group) {
      const failed = this.#pipelineError
      // After a recorded event failed, nothing queued behind it is written (no gap in a step, no
      // turn end after a missing event): recorded and posted ones fail with it, and the first
      // awaited one behind it takes the error to its producer (who ends what it was doing).
      if (!failed) live.push(it)
      else {
        if (it.kind === 'awaited') this.#pipelineError = undefined
        this.#settle(it, undefined, failed)
      }
    }
    if (live.length === 0) return
    let turns = s.turns
    const ts = new Date().toISOString()
    const events = live.map((it, i) => {
      const opens = it.type === 'user_message' || it.type === 'turn_start'
      // A turn's user_message and turn_start open turn N (= turns so far); later events belong to it.
      const turn = opens ? turns : Math.max(0, turns - 1)
      if (it.type === 'turn_start') turns = turn + 1
      // Its data was checked when recorded: the store does not check it again (builtEvent).
      return builtEvent({
        seq: s.lastSeq + 1 + i,
        id: `evt-${randomUUID()}`,
        session_id: this.#o.sessionId,
        type: it.type,
        turn,
        ts,
        data: it.data,
      } as AnyEvent)
    })
    let committed = events.length
    let cause: unknown
    try {
      if (this.#fence) throw this.#fence
      await appendGroup(this.#o.store, events)
    } catch (err) {
      committed = err instanceof AppendGroupError ? err.committed : 0
      cause = err instanceof AppendGroupError ? err.cause : err
    }
    if (committed === 0 && (await this.#keptAfterAll(cause, events[0]!.seq))) {
      // The log holds our earlier event at this seq: write the group again after it.
      this.#items.unshift(...live)
      return
    }
    if (committed > 0) this.#failedAt = undefined
    for (let i = 0; i < committed; i++) {
      const e = events[i]!
      reduce(s, e)
      this.#o.onEvent(e)
      this.#settle(live[i]!, e)
    }
    if (committed > 0 && this.#unreported && events[committed - 1]!.type !== 'notice') this.#report()
    if (committed === live.length) return
    const failed = live[committed]!
    const err = cause instanceof EventLogError ? cause : new EventLogError(failed.type, cause)
    const at = events[committed]!
    if (this.#failedAt?.seq !== at.seq) this.#failedAt = { seq: at.seq, ids: new Map() }
    if (this.#failedAt.ids.size < MAX_FAILED_IDS) this.#failedAt.ids.set(at.id, err)
    // A recorded event's failure waits for its producer; an awaited one's reaches it now (and
    // ends what the producer was doing, so nothing is held for it any more).
    if (failed.kind === 'recorded') this.#pipelineError ??= err
    else if (failed.kind === 'awaited') this.#pipelineError = undefined
    this.#settle(failed, undefined, err)
    // The rest were not written: they go first in the next group, after the counter the log kept.
    const rest = live.slice(committed + 1)
    this.#items.unshift(...rest)
  }

  #settle(it: Item, e: AnyEvent | undefined, err?: unknown): void {
    if (it.settled) return
    it.settled = true
    this.#queued--
    if (e) it.resolve(e)
    else it.reject(err)
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
    if (this.#pipelineError === lost) this.#pipelineError = undefined
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
    void this.#enqueue('notice', checkEventData('notice', { level: 'error', text: e.message }), 'posted').catch(() => {
      this.#unreported ??= e
    })
  }
}

/** Persist `events` as one group: `appendMany` where the store has it, else one by one. */
async function appendGroup(store: EventStore, events: AnyEvent[]): Promise<void> {
  if (events.length > 1 && store.appendMany) return store.appendMany(events)
  for (let i = 0; i < events.length; i++) {
    try {
      await store.append(events[i]!)
    } catch (err) {
      throw new AppendGroupError(i, err)
    }
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
