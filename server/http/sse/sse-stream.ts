/**
 * One SSE response: a session's events (catch-up then live, from `Session.stream`) written as
 * records, with the stream's opening `retry:`, heartbeats, a closing `end`, and backpressure.
 *
 * Slow clients (docs/http.md "Slow clients"): each response has a write buffer of
 * `bufferBytes`. The server reads the session's events only as fast as the client takes them:
 * while the buffer is full it stops reading, and the session stream keeps at most its
 * high-water mark of live events for this client before it falls back to reading the log from
 * the client's cursor — so neither the agent nor any other client ever waits for this one, and
 * memory per client stays bounded. A client that takes nothing for `stallMs` while records wait
 * is disconnected: it reconnects with `Last-Event-ID` and loses nothing, since every event it
 * has not received is on disk.
 *
 * Records are coalesced: those produced in one turn of the event loop (a replayed page, a burst
 * of live events) go out as one chunk, flushed on `setImmediate` or at `CHUNK_BYTES`, instead
 * of one write per event; backpressure is checked after each record, so a client holds at most
 * `bufferBytes` + `CHUNK_BYTES`.
 */
import type { SseEnd } from '../../../generated/schemas.gen.ts'
import { TERMINAL_EVENTS, type AnyEvent, type EventType } from '../../events/event-types.ts'
import type { Logger } from '../../log.ts'
import { BufferPool } from '../../store/buffer-pool.ts'
import { storedEvent, type StoredRecord } from '../../store/stored-lines.ts'
import { encodeComment, encodeRecord, type SseRecord } from './format.ts'
import { endRecord, type StoredEncoder } from './event-map.ts'

export interface SseSettings {
  /** `retry:` sent when a stream opens (ms a client waits before reconnecting). */
  retryMs: number
  /** A `: ping` comment after this long without a write. */
  heartbeatMs: number
  /** Bytes queued for one client before the server stops reading events for it. */
  bufferBytes: number
  /** A client that takes nothing for this long while records wait is disconnected. */
  stallMs: number
}

export const DEFAULT_SSE_SETTINGS: SseSettings = {
  retryMs: 1000,
  heartbeatMs: 15_000,
  bufferBytes: 64 * 1024,
  stallMs: 30_000,
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // nginx and similar proxies must not buffer the stream.
  'x-accel-buffering': 'no',
}

export interface SseStreamOptions {
  sessionId: string
  /** Events after this counter are sent. */
  afterSeq: number
  /** The events to send (the session's stream after `afterSeq`), ended by `signal`. */
  events(afterSeq: number, signal: AbortSignal): AsyncIterable<AnyEvent>
  record(e: AnyEvent): SseRecord
  /**
   * Stored records sent as they are before `events` takes over (a replay): pages after a cursor
   * (undefined: none left to send so), and the encoder of one kept as text (the same bytes
   * `record` gives its event), which writes it straight into the chunk being filled. Only
   * records of turns already written come this way, so no `settle` applies to them, and
   * `endAfter` sees only their turns' opening and ending events.
   */
  stored?: {
    /**
     * `release` (when given) is called once the stream is done with the page's records (every one
     * copied out or dropped): the page's buffer may be reused then.
     */
    page(afterSeq: number): Promise<{ records: StoredRecord[]; more: boolean; release?(): void } | undefined>
    encode: StoredEncoder
    /**
     * Whether the stream may end after stored record `seq` (when the end rule says so): the
     * stored records are all there is. Without it a stream never ends inside the stored part.
     */
    final?(seq: number): boolean
  }
  /**
   * A promise to wait for (or the next event, whichever comes first) before sending `e`: a
   * turn's terminal record goes out once the session has finished that turn, so a client that
   * acts on it (undo, a new prompt) finds the session idle.
   */
  settle?(e: AnyEvent): Promise<unknown> | undefined
  /**
   * After each event: whether the stream closes after it. `ready` (when given) resolves true
   * when the stream may end, unless another event arrives first (a turn still finishing).
   */
  endAfter?(e: AnyEvent): { end: SseEnd; ready?: Promise<boolean> } | undefined
  /** Aborted when the session leaves the manager or the server stops: `end`, then close. */
  stop: AbortSignal
  settings: SseSettings
  logger: Logger
  /** Called once when the stream is over (closed, ended, or the client went away). */
  onClose?(): void
  /**
   * Arranges for `done` to be called once the transport is finished with `chunk` (its bytes
   * written to the socket, or the write given up), and not before. With it, stored records are
   * encoded into buffers of a pool that each get back after their chunk went out; without it
   * (a consumer that may keep the chunks), into fresh buffers.
   */
  written?(chunk: Uint8Array, done: () => void): void
}

/**
 * Each live event's record encoded once per wire (`record` function) and shared by every stream
 * that sends it: the event object is the one the store handed to all subscribers, so a fan-out
 * to many clients serialises and encodes it once, and the same bytes go to every socket.
 */
const encodedRecords = new WeakMap<(e: AnyEvent) => SseRecord, WeakMap<AnyEvent, Buffer>>()

function encodedRecord(record: (e: AnyEvent) => SseRecord, e: AnyEvent): Buffer {
  let byEvent = encodedRecords.get(record)
  if (!byEvent) encodedRecords.set(record, (byEvent = new WeakMap()))
  let bytes = byEvent.get(e)
  if (!bytes) byEvent.set(e, (bytes = Buffer.from(encodeRecord(record(e)))))
  return bytes
}

/**
 * Streams with records pending, flushed together by one `setImmediate` at the end of the loop
 * turn (not one timer per stream: a fan-out to many clients schedules one).
 */
const dirty = new Set<() => void>()
let flushing = false
const flushAll = (): void => {
  flushing = false
  for (const flush of dirty) flush()
  dirty.clear()
}
const scheduleFlush = (): void => {
  if (flushing) return
  flushing = true
  setImmediate(flushAll)
}

/** The events that open or end a turn: what an end rule follows. */
const TURN_MARKS: ReadonlySet<EventType> = new Set<EventType>(['user_message', 'turn_start', ...TERMINAL_EVENTS])

/** A pending chunk is flushed at this size even before the loop turn ends. */
const CHUNK_BYTES = 64 * 1024
/** Stored records are encoded into a buffer of this size (a chunk and most of a record more). */
const FILL_BYTES = CHUNK_BYTES + 16 * 1024
/**
 * Fill buffers of streams whose transport says when a chunk is written (`written`), shared by all
 * of them: a stream holds a few at a time (the chunk being filled, one queued, the ones the socket
 * is writing), so 64 free ones (5 MiB) serve many streams at once; more are allocated and dropped.
 */
export const fillPool = new BufferPool(FILL_BYTES, 64)

export function sseResponse(o: SseStreamOptions): Response {
  const { settings } = o
  const iterating = new AbortController()
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let closed = false
  let wake: ((room: boolean) => void) | undefined
  let heartbeat: NodeJS.Timeout | undefined
  let lastWrite = Date.now()
  /** What waits for the next chunk: encoded records, then text not yet encoded. */
  let parts: Buffer[] = []
  let text = ''
  let pendingBytes = 0
  /** Where stored records are encoded: `fill[fillFrom..fillAt)` waits, after `parts` and `text`. */
  let fill: Buffer | undefined
  let fillFrom = 0
  let fillAt = 0
  /** Chunks sent so far. */
  let chunks = 0
  /** Pool buffers the pending chunk's stored records were encoded into (`fill` last). */
  let fills: Buffer[] = []
  const pooled = o.written !== undefined

  const finish = (): void => {
    if (closed) return
    closed = true
    parts = []
    text = ''
    pendingBytes = 0
    fill = undefined
    // Nothing was sent from them: the pending chunk is dropped.
    for (const b of fills) fillPool.give(b)
    fills = []
    dirty.delete(flush)
    clearInterval(heartbeat)
    o.stop.removeEventListener('abort', onStop)
    iterating.abort()
    wake?.(true)
    o.onClose?.()
  }
  /** Move what waits in `fill` behind `parts` (the bytes written into it stay as they are). */
  const sealFill = (): void => {
    if (fill && fillAt > fillFrom) parts.push(fill.subarray(fillFrom, fillAt))
    fillFrom = fillAt
  }
  const sealText = (): void => {
    if (text === '') return
    parts.push(Buffer.from(text))
    text = ''
  }
  /** Send what is pending as one chunk (a lone encoded record as it is, shared). */
  function flush(): void {
    dirty.delete(flush)
    if (closed || pendingBytes === 0) return
    sealText()
    sealFill()
    // The bytes sent are the reader's now: the next stored record goes into a new buffer.
    fill = undefined
    const chunk = parts.length === 1 ? parts[0]! : Buffer.concat(parts)
    parts = []
    pendingBytes = 0
    if (fills.length > 0) {
      // A pool buffer whose bytes are the chunk itself comes back once the transport has written
      // them; the others were copied into the chunk (or not used), so they come back now.
      for (const b of fills) {
        if (chunk.buffer === b.buffer) o.written!(chunk, () => fillPool.give(b))
        else fillPool.give(b)
      }
      fills = []
    }
    controller.enqueue(chunk)
    chunks++
    lastWrite = Date.now()
  }
  /** After `n` bytes were queued: out at the end of this loop turn, or now when the chunk is full. */
  const queued = (n: number): void => {
    pendingBytes += n
    if (pendingBytes >= CHUNK_BYTES) flush()
    else if (!dirty.has(flush)) {
      dirty.add(flush)
      scheduleFlush()
    }
  }
  /** Queue `data`; it goes out at the end of this loop turn, or now when the chunk is full. */
  const write = (data: string | Buffer): void => {
    if (closed) return
    sealFill()
    if (typeof data === 'string') text += data
    else {
      sealText()
      parts.push(data)
    }
    queued(data.length)
  }
  /** Queue a stored record, encoded straight into the buffer being filled. */
  const writeStored = (encode: StoredEncoder, r: Extract<StoredRecord, { kind: 'text' }>): void => {
    if (closed) return
    sealText()
    let at = fill ? encode(r, fill, fillAt) : -1
    // No room left: what waits goes with the pending chunk, the record into a new buffer.
    while (at < 0) {
      sealFill()
      if (pooled && -at <= FILL_BYTES) fills.push((fill = fillPool.take()))
      else fill = Buffer.allocUnsafe(Math.max(FILL_BYTES, -at))
      fillFrom = fillAt = 0
      at = encode(r, fill, 0)
    }
    const n = at - fillAt
    fillAt = at
    queued(n)
  }
  const end = (payload: SseEnd): void => {
    if (closed) return
    write(encodeRecord(endRecord(payload)))
    flush()
    controller.close()
    finish()
  }
  const drop = (why: string): void => {
    if (closed) return
    o.logger.info(`SSE client of ${o.sessionId} disconnected: ${why}`)
    controller.error(new Error(why))
    finish()
  }
  function onStop(): void {
    end({ session_id: o.sessionId, success: false })
  }

  /** True, or a promise of it, when the buffer has room (or the stream is over); false after `stallMs`. */
  const room = (): true | Promise<boolean> => {
    if (closed || (controller.desiredSize ?? 1) > 0) return true
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined
        resolve(false)
      }, settings.stallMs)
      wake = (r) => {
        clearTimeout(timer)
        wake = undefined
        resolve(r)
      }
    })
  }

  const stall = (): void =>
    drop(`it took nothing for ${settings.stallMs} ms with ${settings.bufferBytes} bytes waiting`)

  /** Send stored records from the cursor while the store has them; the cursor after them. */
  const replay = async (stored: NonNullable<SseStreamOptions['stored']>): Promise<number | undefined> => {
    let cursor = o.afterSeq
    for (;;) {
      const page = await stored.page(cursor)
      if (!page || closed) {
        page?.release?.()
        return cursor
      }
      try {
        if (!(await sendPage(stored, page.records))) return undefined
      } finally {
        // Every record of the page was copied into the chunks (or parsed) or dropped.
        page.release?.()
      }
      cursor = page.records.at(-1)?.seq ?? cursor
      if (!page.more) return cursor
    }
  }

  /** Send a page's stored records; false when the stream ended or was dropped meanwhile. */
  const sendPage = async (
    stored: NonNullable<SseStreamOptions['stored']>,
    records: StoredRecord[],
  ): Promise<boolean> => {
    let checked = chunks
    for (const r of records) {
      if (r.kind === 'text') writeStored(stored.encode, r)
      else write(encodeRecord(o.record(r.event)))
      // The end rule follows turns; records before the last one never end the stream, unless
      // the stored records are all there is (`final`).
      const final = stored.final?.(r.seq) === true
      if (o.endAfter && (final || TURN_MARKS.has(r.type))) {
        const last = o.endAfter(storedEvent(r, o.sessionId))
        if (last && !last.ready && final) {
          end(last.end)
          return false
        }
      }
      // Room only shrinks when a chunk goes out: look again only after one did.
      if (chunks !== checked) {
        checked = chunks
        const r2 = room()
        if (r2 !== true && !(await r2)) {
          stall()
          return false
        }
      }
      if (closed) return false
    }
    return true
  }

  const pump = async (): Promise<void> => {
    try {
      const after = o.stored ? await replay(o.stored) : o.afterSeq
      if (after === undefined || closed) return
      const it = o.events(after, iterating.signal)[Symbol.asyncIterator]()
      const read = (): Promise<IteratorResult<AnyEvent>> => {
        const p = it.next()
        p.catch(() => {}) // a read abandoned at `end` may fail later; nobody awaits it then
        return p
      }
      let next = read()
      for (;;) {
        const r = await next
        if (r.done || closed) return
        next = read()
        const hold = o.settle?.(r.value)
        if (hold) {
          await Promise.race([
            next.then(
              () => {},
              () => {},
            ),
            hold,
          ])
          if (closed) return
        }
        write(encodedRecord(o.record, r.value))
        const last = o.endAfter?.(r.value)
        // With `ready`: the session settles with nothing after this event (end), or the next
        // event comes first (go on with it).
        if (
          last &&
          (!last.ready ||
            (await Promise.race([
              next.then(
                () => false,
                () => false,
              ),
              last.ready,
            ])))
        )
          return end(last.end)
        // The queue fills when chunks go out; wait for room only then (a full chunk just sent).
        const r2 = room()
        if (r2 !== true && !(await r2)) return stall()
      }
    } catch (err) {
      if (closed) return
      o.logger.error(`SSE stream of ${o.sessionId} failed`, err)
      // Closed without `end`: the client reconnects and resumes from its last id.
      flush()
      controller.close()
      finish()
    }
  }

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c
        // Headers and a first chunk go out at once, so the client sees the stream open.
        write(`retry: ${settings.retryMs}\n${encodeComment('open')}`)
        flush()
        heartbeat = setInterval(
          () => {
            if (
              Date.now() - lastWrite >= settings.heartbeatMs &&
              (controller.desiredSize ?? 0) > 0 &&
              pendingBytes === 0
            ) {
              write(encodeComment('ping'))
              flush()
            }
          },
          Math.max(10, Math.floor(settings.heartbeatMs / 2)),
        )
        heartbeat.unref()
        if (o.stop.aborted) onStop()
        else {
          o.stop.addEventListener('abort', onStop, { once: true })
          void pump()
        }
      },
      pull() {
        wake?.(true)
      },
      cancel() {
        finish()
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: settings.bufferBytes }),
  )
  return new Response(body, { status: 200, headers: SSE_HEADERS })
}
