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
 * `bufferBytes` + `CHUNK_BYTES`. A chunk of one record is that record's bytes, made once for
 * every client of the stream (event-map.ts), so a fan-out copies nothing per client.
 */
import type { SseEnd } from '../../../generated/schemas.gen.ts'
import type { AnyEvent } from '../../events/event-types.ts'
import type { Logger } from '../../log.ts'
import { encodeComment, encodeRecord } from './format.ts'
import { endRecord } from './event-map.ts'

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
  /** The events to send (the session's stream from the start cursor), ended by `signal`. */
  events(signal: AbortSignal): AsyncIterable<AnyEvent>
  /** The event's record as UTF-8 bytes (shared between the clients of a stream: never modified). */
  record(e: AnyEvent): Uint8Array
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
}

const encoder = new TextEncoder()

/** A pending chunk is flushed at this size even before the loop turn ends. */
const CHUNK_BYTES = 64 * 1024

export function sseResponse(o: SseStreamOptions): Response {
  const { settings } = o
  const iterating = new AbortController()
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let closed = false
  let wake: ((room: boolean) => void) | undefined
  let heartbeat: NodeJS.Timeout | undefined
  let lastWrite = Date.now()
  let pending: Uint8Array[] = []
  let pendingBytes = 0
  let flushTimer: NodeJS.Immediate | undefined

  const finish = (): void => {
    if (closed) return
    closed = true
    pending = []
    pendingBytes = 0
    clearImmediate(flushTimer)
    clearInterval(heartbeat)
    o.stop.removeEventListener('abort', onStop)
    iterating.abort()
    wake?.(true)
    o.onClose?.()
  }
  /** Send what is pending as one chunk. */
  const flush = (): void => {
    clearImmediate(flushTimer)
    flushTimer = undefined
    if (closed || pendingBytes === 0) return
    const parts = pending
    pending = []
    pendingBytes = 0
    controller.enqueue(parts.length === 1 ? parts[0]! : Buffer.concat(parts))
    lastWrite = Date.now()
  }
  /** Queue `bytes`; they go out at the end of this loop turn, or now when the chunk is full. */
  const write = (bytes: Uint8Array): void => {
    if (closed) return
    pending.push(bytes)
    pendingBytes += bytes.byteLength
    if (pendingBytes >= CHUNK_BYTES) flush()
    else flushTimer ??= setImmediate(flush)
  }
  const writeText = (text: string): void => write(encoder.encode(text))
  const end = (payload: SseEnd): void => {
    if (closed) return
    writeText(encodeRecord(endRecord(payload)))
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

  const pump = async (): Promise<void> => {
    try {
      const it = o.events(iterating.signal)[Symbol.asyncIterator]()
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
        write(o.record(r.value))
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
        if (r2 !== true && !(await r2))
          return drop(`it took nothing for ${settings.stallMs} ms with ${settings.bufferBytes} bytes waiting`)
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
        writeText(`retry: ${settings.retryMs}\n${encodeComment('open')}`)
        flush()
        heartbeat = setInterval(
          () => {
            if (
              Date.now() - lastWrite >= settings.heartbeatMs &&
              (controller.desiredSize ?? 0) > 0 &&
              pendingBytes === 0
            ) {
              writeText(encodeComment('ping'))
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
