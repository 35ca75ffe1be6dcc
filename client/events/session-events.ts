/**
 * Typed session event streams over EventStream: the plural family (`/sessions/{id}/events`,
 * `event:` = the canonical type, closed by `end`) yields the generated SseEnvelope union; the
 * singular family (`/session/{id}/events`, `event: loop_event` / `user_message` / `result`,
 * open across turns) yields the generated LoopEventEnvelope union. Each item carries `seq`, the
 * record's `id:` (the per-session counter), so a caller can resume with `from: seq`.
 */
import type { LoopEventEnvelope, SseEnd, SseEnvelope } from '../../generated/schemas.gen.ts'
import { ChimeraClientError } from '../errors.ts'
import {
  EventStream,
  type EventStreamOptions,
  type ReconnectOptions,
  type RetryInfo,
  type SseRecord,
} from './event-stream.ts'

/** One event of `/sessions/{id}/events`: the envelope (discriminated on `type`) and its counter. */
export type SessionStreamEvent = SseEnvelope & { seq: number }
/** One record of `/session/{id}/events`: the envelope (discriminated on `type`), its counter and SSE event name. */
export type LoopStreamEvent = LoopEventEnvelope & { seq: number; event: 'loop_event' | 'user_message' | 'result' }
export type { SseEnd }

export interface StreamOptions {
  /**
   * Where to start: a counter to resume after (`0` = the whole history, the default), or
   * `'live'` to skip the replay. With `'live'`, records from before the first delivered one are
   * not replayed after a drop either (there is no cursor yet).
   */
  from?: number | 'live'
  signal?: AbortSignal
  /** Bearer token for this stream (default: the client's). */
  token?: string
  reconnect?: ReconnectOptions
  /** Called before each reconnection wait. */
  onRetry?: (info: RetryInfo) => void
  /** Called each time a connection is answered with an event stream (the first and every reconnection). */
  onOpen?: () => void
}

interface Connection {
  baseUrl: string
  token?: string
  fetch?: (req: Request) => Promise<Response>
}

/** The plural-family stream; `end` holds the closing record's data once the stream ended on it. */
export class SessionEventStream extends EventStream<SessionStreamEvent> {
  /** `{session_id, success}` of the `end` record, once received. */
  get end(): SseEnd | undefined {
    const rec = this.endRecord
    return rec ? (parseData(rec, 'GET /sessions/{id}/events') as SseEnd) : undefined
  }
}

/** The singular-family stream: open across turns; it ends on `end` only when the session is deleted or evicted or the server stops. */
export class LoopEventStream extends EventStream<LoopStreamEvent> {
  /** `{session_id, success: false}` of the `end` record, once received. */
  get end(): SseEnd | undefined {
    const rec = this.endRecord
    return rec ? (parseData(rec, 'GET /session/{id}/events') as SseEnd) : undefined
  }
}

function parseData(rec: SseRecord, operation: string): Record<string, unknown> {
  let data: unknown
  try {
    data = JSON.parse(rec.data)
  } catch {
    throw new ChimeraClientError(
      'protocol',
      `${operation}: record ${rec.id ?? rec.event} carries data that is not JSON`,
    )
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new ChimeraClientError(
      'protocol',
      `${operation}: record ${rec.id ?? rec.event} carries data that is not a JSON object`,
    )
  return data as Record<string, unknown>
}

function baseOptions(path: string, c: Connection & StreamOptions, operation: string): Omit<EventStreamOptions, 'url'> {
  if (c.from !== undefined && c.from !== 'live' && (!Number.isSafeInteger(c.from) || c.from < 0))
    throw new RangeError(`from must be 'live' or a counter ≥ 0, got ${String(c.from)}`)
  return {
    headers: c.token ? { authorization: `Bearer ${c.token}` } : {},
    fetch: c.fetch,
    signal: c.signal,
    lastEventId: typeof c.from === 'number' && c.from > 0 ? String(c.from) : undefined,
    reconnect: c.reconnect,
    onRetry: c.onRetry,
    onOpen: c.onOpen,
    operation: `${operation} (${path})`,
  }
}

export function openSessionEvents(sessionId: string, c: Connection & StreamOptions): SessionEventStream {
  const path = `/sessions/${encodeURIComponent(sessionId)}/events`
  const operation = 'GET /sessions/{id}/events'
  const base = c.baseUrl.replace(/\/+$/, '')
  return new SessionEventStream(
    {
      ...baseOptions(path, c, operation),
      // `?from=live` only until there is a cursor: after that, Last-Event-ID says where to resume.
      url: (last) => `${base}${path}${c.from === 'live' && last === undefined ? '?from=live' : ''}`,
      endEvent: 'end',
    },
    (rec) => {
      const data = parseData(rec, operation)
      if (data.type !== rec.event)
        throw new ChimeraClientError(
          'protocol',
          `${operation}: record ${rec.id} is event ${JSON.stringify(rec.event)} but carries type ${JSON.stringify(data.type)}`,
        )
      return { ...data, seq: Number(rec.id) } as SessionStreamEvent
    },
  )
}

export function openLoopEvents(
  sessionId: string,
  c: Connection & Omit<StreamOptions, 'from'> & { from?: number },
): LoopEventStream {
  const path = `/session/${encodeURIComponent(sessionId)}/events`
  const operation = 'GET /session/{id}/events'
  const base = c.baseUrl.replace(/\/+$/, '')
  return new LoopEventStream(
    { ...baseOptions(path, c, operation), url: () => `${base}${path}`, endEvent: 'end' },
    (rec) => {
      const data = parseData(rec, operation)
      if (typeof data.type !== 'string')
        throw new ChimeraClientError('protocol', `${operation}: record ${rec.id} carries no type`)
      return { ...data, seq: Number(rec.id), event: rec.event } as LoopStreamEvent
    },
  )
}
