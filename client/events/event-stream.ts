/**
 * A resumable Server-Sent-Events stream over fetch (so a bearer token rides in a header, in
 * browsers too), parsed with eventsource-parser. On any drop — a network error, a clean close
 * before the end record, a dead connection that stopped sending bytes, a retryable status — it
 * reconnects with `Last-Event-ID` set to the last id it delivered, after the server's `retry:`
 * interval backed off exponentially with jitter. Records carry numeric ids (the per-session
 * counter of specs/asyncapi/sse.asyncapi.yaml): one at or below the last delivered id is a
 * duplicate and is dropped, so each record is delivered once and in order across any number of
 * drops; a record cut mid-way never dispatches (a fresh parser per connection). A gap (an id
 * past the next one) makes it reconnect once from the last id; a server that answers the same
 * gap again does not have those records, and the stream goes on (counted in `stats.gaps`).
 * Why this is hand-written rather than the `eventsource` package: docs/decisions/0091.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import { ChimeraApiError, ChimeraClientError } from '../errors.ts'

/** One SSE record as received. */
export interface SseRecord {
  id: string | undefined
  event: string
  data: string
}

export interface ReconnectOptions {
  /** Delay before reconnecting until the server sends `retry:` (ms). Default 1000. */
  initialDelayMs?: number
  /** Upper bound of the backed-off delay (ms). Default 30 000. */
  maxDelayMs?: number
  /** Failed connection attempts in a row before giving up (0 = never reconnect). Default: unlimited. */
  maxAttempts?: number
  /** A connection silent for this long is dead and is replaced (ms; 0 = never). Default 45 000 (three missed 15 s pings). */
  idleTimeoutMs?: number
  /** Random numbers in [0, 1) for the jitter. Default Math.random. */
  random?: () => number
}

/** Passed to `onRetry` before each wait. */
export interface RetryInfo {
  /** 1 for the first reconnection after a connection that received data, then 2, 3… while attempts keep failing. */
  attempt: number
  /** How long the stream waits before reconnecting (ms). */
  delayMs: number
  /** The server's last `retry:` value (or `initialDelayMs`) that the delay backs off from. */
  retryMs: number
  /** The cursor the next connection sends as `Last-Event-ID`. */
  lastEventId: string | undefined
  /** Why the previous connection ended (undefined: the server closed it cleanly before the end). */
  error: unknown
}

export interface StreamStats {
  /** Connections that got a response. */
  connections: number
  /** Reconnections started. */
  reconnects: number
  /** Records dropped because their id was already delivered. */
  duplicates: number
  /** Gaps in the ids that the server could not fill. */
  gaps: number
}

export interface EventStreamOptions {
  /** The URL for a connection, given the cursor it resumes from (undefined on a fresh start). */
  url: (lastEventId: string | undefined) => string
  headers?: Record<string, string>
  fetch?: (req: Request) => Promise<Response>
  signal?: AbortSignal
  /** Resume after this id (sent as `Last-Event-ID` on the first connection). */
  lastEventId?: string
  /** A record with this `event:` name and no id ends the stream (the plural family's `end`). */
  endEvent?: string
  reconnect?: ReconnectOptions
  onRetry?: (info: RetryInfo) => void
  /** Called each time a connection is answered with an event stream (the first and every reconnection). */
  onOpen?: () => void
  /** `METHOD /path/template`, for error messages. */
  operation: string
}

/** Statuses worth another try: the server is busy, restarting or behind a proxy that is. */
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504])

/**
 * The records of one logical stream, each once and in order. Iterate it once; stopping the
 * iteration (`break`) or aborting `signal` closes the connection and ends the iteration quietly.
 * A server answer that cannot get better by retrying (401, 403, 404…) rejects with
 * ChimeraApiError; a broken contract with ChimeraClientError('protocol'); a spent budget with
 * ChimeraClientError('reconnect_exhausted').
 */
export class EventStream<T> implements AsyncIterable<T> {
  readonly #opts: EventStreamOptions
  readonly #map: (rec: SseRecord) => T
  #lastEventId: string | undefined
  #end: SseRecord | undefined
  #started = false
  readonly #stats: StreamStats = { connections: 0, reconnects: 0, duplicates: 0, gaps: 0 }

  constructor(opts: EventStreamOptions, map: (rec: SseRecord) => T) {
    this.#opts = opts
    this.#map = map
    this.#lastEventId = opts.lastEventId
  }

  /** The id of the last record delivered: where a new stream would resume. */
  get lastEventId(): string | undefined {
    return this.#lastEventId
  }

  /** The end record, once the stream ended on one. */
  get endRecord(): SseRecord | undefined {
    return this.#end
  }

  get stats(): Readonly<StreamStats> {
    return { ...this.#stats }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#started)
      throw new ChimeraClientError(
        'protocol',
        'an event stream can be iterated only once; open a new one (pass `from` to resume)',
      )
    this.#started = true
    return this.#run()
  }

  async *#run(): AsyncGenerator<T, void, undefined> {
    const o = this.#opts
    const r = o.reconnect ?? {}
    const maxAttempts = r.maxAttempts ?? Infinity
    const maxDelay = r.maxDelayMs ?? 30_000
    const idleMs = r.idleTimeoutMs ?? 45_000
    const random = r.random ?? Math.random
    const doFetch = o.fetch ?? ((req: Request) => globalThis.fetch(req))
    let retryMs = r.initialDelayMs ?? 1000
    let attempt = 0
    let gapRetriedAt: number | undefined
    for (;;) {
      if (o.signal?.aborted) return
      const ctl = new AbortController()
      const onAbort = (): void => ctl.abort(o.signal?.reason)
      o.signal?.addEventListener('abort', onAbort, { once: true })
      let idle: ReturnType<typeof setTimeout> | undefined
      const armIdle = (): void => {
        if (idleMs <= 0) return
        clearTimeout(idle)
        idle = setTimeout(() => ctl.abort(new ChimeraClientError('protocol', `no data for ${idleMs} ms`)), idleMs)
      }
      let progressed = false
      let cause: unknown
      let fatal: unknown
      try {
        const headers: Record<string, string> = { ...o.headers, accept: 'text/event-stream' }
        if (this.#lastEventId !== undefined) headers['last-event-id'] = this.#lastEventId
        armIdle()
        const res = await doFetch(new Request(o.url(this.#lastEventId), { headers, signal: ctl.signal }))
        this.#stats.connections++
        if (!res.ok) {
          const err = new ChimeraApiError(res.status, await readBody(res), o.operation)
          if (RETRYABLE.has(res.status)) cause = err
          else fatal = err
        } else if (
          !(res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream') ||
          !res.body
        ) {
          await res.body?.cancel()
          fatal = new ChimeraClientError(
            'protocol',
            `${o.operation} answered ${res.headers.get('content-type') ?? 'no content type'}, not an event stream`,
          )
        } else {
          const queue: EventSourceMessage[] = []
          const parser = createParser({
            onEvent: (m) => queue.push(m),
            onRetry: (ms) => {
              retryMs = ms
            },
          })
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
          o.onOpen?.()
          // Not every fetch ties a response body to the request's signal (msw's mocked bodies do
          // not): cancel the read ourselves, so an abort or the idle timer always ends it.
          const stopRead = (): void => void reader.cancel(ctl.signal.reason).catch(() => {})
          ctl.signal.addEventListener('abort', stopRead, { once: true })
          try {
            for (;;) {
              armIdle()
              const { done, value } = await reader.read()
              if (done) {
                // Our own cancel (abort, idle timer) ends the read quietly: report why.
                if (ctl.signal.aborted) throw ctl.signal.reason
                break
              }
              // Bytes (records or `: ping` comments) mean the connection works: the backoff starts over.
              progressed = true
              parser.feed(value)
              while (queue.length > 0) {
                if (o.signal?.aborted) return
                const m = queue.shift()!
                const rec: SseRecord = { id: m.id, event: m.event ?? 'message', data: m.data }
                if (rec.id === undefined) {
                  if (rec.event === o.endEvent) {
                    this.#end = rec
                    return
                  }
                  throw new ChimeraClientError('protocol', `${o.operation}: a ${rec.event} record without an id`)
                }
                const seq = parseId(rec.id, o.operation)
                const last = this.#lastEventId === undefined ? undefined : Number(this.#lastEventId)
                if (last !== undefined && seq <= last) {
                  this.#stats.duplicates++
                  continue
                }
                if (last !== undefined && seq > last + 1) {
                  if (gapRetriedAt !== last) {
                    // Ask the server once to fill the gap from the last delivered id.
                    gapRetriedAt = last
                    throw new GapError(last, seq)
                  }
                  this.#stats.gaps++
                }
                const item = this.#map(rec)
                this.#lastEventId = rec.id
                yield item
              }
            }
          } finally {
            ctl.signal.removeEventListener('abort', stopRead)
            await reader.cancel().catch(() => {})
          }
        }
      } catch (err) {
        if (o.signal?.aborted) return
        if (ChimeraClientError.is(err, 'protocol') && !(err instanceof GapError) && !ctl.signal.aborted) throw err
        cause = err instanceof GapError ? undefined : (ctl.signal.reason ?? err)
        if (err instanceof GapError) progressed = true
      } finally {
        clearTimeout(idle)
        o.signal?.removeEventListener('abort', onAbort)
        ctl.abort()
      }
      if (fatal) throw fatal
      if (o.signal?.aborted) return
      attempt = progressed ? 1 : attempt + 1
      if (attempt > maxAttempts) {
        throw new ChimeraClientError(
          'reconnect_exhausted',
          `${o.operation}: gave up after ${maxAttempts} failed reconnection${maxAttempts === 1 ? '' : 's'}`,
          { cause },
        )
      }
      // Exponential backoff from the server's `retry:` with "equal jitter": half fixed, half random.
      const base = Math.min(maxDelay, retryMs * 2 ** (attempt - 1))
      const delayMs = base / 2 + random() * (base / 2)
      this.#stats.reconnects++
      o.onRetry?.({ attempt, delayMs, retryMs, lastEventId: this.#lastEventId, error: cause })
      await sleep(delayMs, o.signal)
    }
  }
}

/** Thrown inside the loop to reconnect from the last delivered id when ids jump. */
class GapError extends ChimeraClientError {
  constructor(last: number, got: number) {
    super('protocol', `ids jumped from ${last} to ${got}`)
  }
}

function parseId(id: string, operation: string): number {
  if (!/^[1-9][0-9]*$/.test(id) || !Number.isSafeInteger(Number(id)))
    throw new ChimeraClientError('protocol', `${operation}: record id ${JSON.stringify(id)} is not a positive integer`)
  return Number(id)
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text().catch(() => '')
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
