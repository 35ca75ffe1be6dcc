/**
 * Event-stream responses of the msw mock, with real `id:` lines and `Last-Event-ID` resume, in
 * the shape of specs/asyncapi/sse.asyncapi.yaml: the plural family replays from the cursor and
 * ends with `end` after a turn's terminal event (waiting live for one when the replay has
 * none); the singular family replays, then stays open and streams appended events until the
 * session is deleted or the client goes away.
 */
import { endsTurn } from '../../generated/event-facts.gen.ts'
import type { ChimeraEvent } from '../../generated/schemas.gen.ts'
import { toLoopRecord, toSseEnvelope, type MockSession, type MockState } from './state.ts'

const HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' }

/** The resume cursor: `Last-Event-ID` when it is a non-negative integer, else 0 (full replay). */
export function cursorOf(req: Request): number {
  const h = (req.headers.get('last-event-id') ?? '').trim()
  return /^[0-9]+$/.test(h) ? Number(h) : 0
}

function record(fields: { id?: number; event: string; data: unknown; retry?: number }): string {
  return `${fields.retry !== undefined ? `retry: ${fields.retry}\n` : ''}${fields.id !== undefined ? `id: ${fields.id}\n` : ''}event: ${fields.event}\ndata: ${JSON.stringify(fields.data)}\n\n`
}

function eventStream(start: (push: (text: string) => void, close: () => void) => () => void): Response {
  const enc = new TextEncoder()
  let stop = (): void => {}
  let closed = false
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const close = (): void => {
        if (closed) return
        closed = true
        stop()
        controller.close()
      }
      stop = start((text) => !closed && controller.enqueue(enc.encode(text)), close)
    },
    cancel() {
      closed = true
      stop()
    },
  })
  return new Response(body, { status: 200, headers: HEADERS })
}

/** The session was deleted: both streams end with `end`, `success: false`. */
function gone(push: (text: string) => void, close: () => void, s: MockSession): void {
  push(record({ event: 'end', data: { session_id: s.id, success: false } }))
  close()
}

export function pluralStream(s: MockSession, req: Request, retryMs: number): Response {
  const live = new URL(req.url).searchParams.get('from') === 'live'
  let cursor = req.headers.has('last-event-id') ? cursorOf(req) : live ? s.events.length : 0
  let first = true
  return eventStream((push, close) => {
    const send = (e: ChimeraEvent): boolean => {
      push(record({ id: e.seq, event: e.type, data: toSseEnvelope(e), retry: first ? retryMs : undefined }))
      first = false
      cursor = e.seq
      if (!endsTurn(e.type)) return false
      const success = e.type === 'agent_result' && (e.data as { success: boolean }).success
      push(record({ event: 'end', data: { session_id: s.id, success } }))
      close()
      return true
    }
    for (const e of s.events.slice(cursor)) if (send(e)) return () => {}
    const listener = (e: ChimeraEvent | null): void => {
      if (e === null) return gone(push, close, s)
      if (e.seq > cursor) send(e)
    }
    s.listeners.add(listener)
    return () => s.listeners.delete(listener)
  })
}

export function singularStream(state: MockState, s: MockSession, req: Request, retryMs: number): Response {
  const cursor = cursorOf(req)
  let first = true
  return eventStream((push, close) => {
    const send = (e: ChimeraEvent): void => {
      const { event, data } = toLoopRecord(e, state.messageIdOf(s, e))
      push(record({ id: e.seq, event, data, retry: first ? retryMs : undefined }))
      first = false
    }
    for (const e of s.events.slice(cursor)) send(e)
    const listener = (e: ChimeraEvent | null): void => (e === null ? gone(push, close, s) : send(e))
    s.listeners.add(listener)
    return () => s.listeners.delete(listener)
  })
}
