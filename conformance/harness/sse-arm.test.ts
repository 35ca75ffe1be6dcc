/**
 * Self-tests of the SSE arm against a small fixture SSE server (h3 `EventStream`, served on a
 * loopback socket by `serve` from h3/node). The server speaks the shape of
 * specs/asyncapi/sse.asyncapi.yaml on `/sessions/:id/events`: `event:` = the event type, `id:` =
 * the 1-based counter, `data:` = an SseEnvelope, `retry: 1000` on the first record, and
 * `Last-Event-ID: N` replays only ids greater than N. It then closes the stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventStream, H3, getRouterParam } from 'h3'
import { serve } from 'h3/node'
import { SseArm } from './arms/sse.ts'
import type { HttpTarget } from './arms/http.ts'

interface Rec {
  type: string
  metadata: unknown
}
const TS = '2026-01-01T00:00:00.000Z'
const GOOD: Rec[] = [
  { type: 'turn_start', metadata: { prompt: 'hi' } },
  { type: 'step_start', metadata: { step: 1 } },
  { type: 'text_delta', metadata: { text: 'Hel' } },
  { type: 'text_delta', metadata: { text: 'lo' } },
]
/** Record 2's metadata fits no event shape (`txt` instead of `text`). */
const BAD: Rec[] = [
  { type: 'turn_start', metadata: { prompt: 'hi' } },
  { type: 'text_delta', metadata: { txt: 'Hel' } },
]
const envelope = (n: number, r: Rec) => ({ id: `evt-0000000${n}`, type: r.type, metadata: r.metadata, ts: TS })

/** Last-Event-ID headers the fixture server received, in order. */
const seenLastEventIds: (string | null)[] = []
/** How many `otter-live` streams the server saw closed by the client. */
let liveClosed = 0

const app = new H3()
app.get('/sessions/:id/events', (event) => {
  const id = getRouterParam(event, 'id')
  if (id === 'otter-missing') {
    event.res.status = 404
    return { error: 'not_found' }
  }
  if (id === 'otter-live') {
    // One record, then the stream stays open until the client goes away.
    const stream = new EventStream(event)
    stream.onClosed(() => {
      liveClosed++
    })
    void stream.push({ id: '1', event: GOOD[0]!.type, data: JSON.stringify(envelope(1, GOOD[0]!)), retry: 1000 })
    return stream
  }
  const log = id === 'otter-bad' ? BAD : GOOD
  const header = event.req.headers.get('last-event-id')
  seenLastEventIds.push(header)
  const last = Number(header ?? 0) || 0
  const stream = new EventStream(event)
  void (async () => {
    let first = true
    for (const [i, r] of log.entries()) {
      const n = i + 1
      if (n <= last) continue
      await stream.push({
        id: String(n),
        event: r.type,
        data: JSON.stringify(envelope(n, r)),
        ...(first ? { retry: 1000 } : {}),
      })
      first = false
    }
    await stream.close()
  })()
  return stream
})

let server: ReturnType<typeof serve> | undefined
let baseUrl = ''

beforeAll(async () => {
  server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true })
  await server.ready()
  baseUrl = String(server.url).replace(/\/$/, '')
})

afterAll(async () => {
  await server?.close(true)
})

/** An arm whose target is the fixture server (closing the arm leaves the server running). */
function arm(): SseArm {
  const target: HttpTarget = { baseUrl, fetch: (req) => fetch(req), close: async () => {} }
  return new SseArm('sse-socket', target)
}

/** Everything the arm receives until the stream-closed marker (which is not included). */
async function drain(a: SseArm): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = []
  for (;;) {
    const item = (await a.next(3000)) as Record<string, unknown> | undefined
    if (item === undefined) throw new Error(`the stream did not close; received so far: ${JSON.stringify(out)}`)
    if (item.closed === true) return out
    if (item.stream === true) continue // the response head
    out.push(item)
  }
}

describe('SseArm against a fixture SSE server', () => {
  it('receives every record as {id, event, data} in order', async () => {
    const a = arm()
    try {
      await a.open('/sessions/otter-1/events', {})
      const recs = await drain(a)
      expect(recs.map((r) => ({ id: r.id, event: r.event, data: r.data }))).toEqual(
        GOOD.map((r, i) => ({ id: String(i + 1), event: r.type, data: envelope(i + 1, r) })),
      )
      expect(recs.map((r) => r.dataText)).toEqual(GOOD.map((r, i) => JSON.stringify(envelope(i + 1, r))))
      expect(a.violations()).toEqual([])
    } finally {
      await a.dispose()
    }
  })

  it('reports retry on the first record only', async () => {
    const a = arm()
    try {
      await a.open('/sessions/otter-1/events', {})
      const recs = await drain(a)
      expect(recs[0]!.retry).toBe(1000)
      expect(recs.slice(1).filter((r) => 'retry' in r)).toEqual([])
    } finally {
      await a.dispose()
    }
  })

  it('opening with last-event-id: 2 sends the header and skips records 1–2', async () => {
    const a = arm()
    try {
      const before = seenLastEventIds.length
      await a.open('/sessions/otter-1/events', { 'last-event-id': '2' })
      const recs = await drain(a)
      expect(seenLastEventIds.slice(before)).toEqual(['2'])
      expect(recs.map((r) => r.id)).toEqual(['3', '4'])
      expect(recs.map((r) => r.event)).toEqual(['text_delta', 'text_delta'])
      expect(recs[0]!.retry).toBe(1000)
      expect(a.violations()).toEqual([])
    } finally {
      await a.dispose()
    }
  })

  it('a record with a bad payload is reported by violations()', async () => {
    const a = arm()
    try {
      await a.open('/sessions/otter-bad/events', {})
      const recs = await drain(a)
      expect(recs.map((r) => r.id)).toEqual(['1', '2'])
      const v = a.violations()
      expect(v).toHaveLength(1)
      expect(v[0]!.dir).toBe('out')
      expect(v[0]!.problem).toMatch(/^text_delta data: /)
      expect(v[0]!.message).toMatchObject({ id: '2', event: 'text_delta' })
    } finally {
      await a.dispose()
    }
  })

  it('a response that is not an event stream is received as {status, headers, body}', async () => {
    const a = arm()
    try {
      await a.open('/sessions/otter-missing/events', {})
      const reply = (await a.next(3000)) as Record<string, unknown>
      expect(reply).toMatchObject({ status: 404, body: { error: 'not_found' } })
      expect(a.violations()).toEqual([])
    } finally {
      await a.dispose()
    }
  })

  it('close() aborts an open stream: the server sees the client go, and nothing more arrives', async () => {
    const a = arm()
    try {
      const closedBefore = liveClosed
      await a.open('/sessions/otter-live/events', {})
      expect(await a.next(3000)).toMatchObject({
        status: 200,
        stream: true,
        headers: { 'content-type': expect.stringMatching(/^text\/event-stream/) },
      })
      expect(await a.next(3000)).toMatchObject({ id: '1', event: 'turn_start' })
      await a.close()
      for (let waited = 0; liveClosed === closedBefore && waited < 3000; waited += 20)
        await new Promise((r) => setTimeout(r, 20))
      expect(liveClosed).toBe(closedBefore + 1)
      expect(await a.next(200)).toBeUndefined()
    } finally {
      await a.dispose()
    }
  })
})
