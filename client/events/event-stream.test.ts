/**
 * Event stream behaviour against the controllable SSE server: where it starts (`from`), how it
 * ends (`end`, abort, break), which answers are final (401, 404, not an event stream, a broken
 * record) and which are retried (503, silence, a gap the server can fill), and the reconnection
 * budget.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createChimeraClient } from '../api.ts'
import { ChimeraApiError, ChimeraClientError } from '../errors.ts'
import { createServer } from 'node:http'
import { sseRecord, startSseServer, type Plan, type SseServer } from './fixtures/sse-server.ts'

const log = Array.from({ length: 5 }, (_, i) => ({
  type: i === 0 ? 'turn_start' : 'text_delta',
  metadata: i === 0 ? { prompt: 'hi' } : { text: `t${i}` },
}))

let server: SseServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function start(plan: (n: number) => Plan, opts: { end?: boolean; log?: typeof log } = {}) {
  server = await startSseServer({ log: opts.log ?? log, retryMs: 1, plan, end: opts.end })
  return createChimeraClient({ baseUrl: server.baseUrl, reconnect: { maxDelayMs: 5 } })
}

/** A server that answers every request with `body` as an event stream (and keeps it open unless `end`). */
async function rawServer(body: string, end: boolean): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const http = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    if (end) res.end(body)
    else res.write(body)
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  return {
    baseUrl: `http://127.0.0.1:${(http.address() as { port: number }).port}`,
    close: async () => {
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    },
  }
}

const collect = async <T extends { seq: number }>(it: AsyncIterable<T>): Promise<number[]> => {
  const out: number[] = []
  for await (const ev of it) out.push(ev.seq)
  return out
}

describe('where a stream starts and how it ends', () => {
  it('replays the whole history by default, ends on `end` and does not reconnect after it', async () => {
    const client = await start(() => ({ kind: 'full' }))
    const stream = client.sessions.events('otter-1')
    expect(await collect(stream)).toEqual([1, 2, 3, 4, 5])
    expect(stream.end).toEqual({ session_id: 'otter-test', success: true })
    expect(stream.lastEventId).toBe('5')
    expect(server!.connections.map((c) => c.lastEventId)).toEqual([null])
  })

  it('from: N sends Last-Event-ID: N; from: 0 is a full replay', async () => {
    const client = await start(() => ({ kind: 'full' }))
    expect(await collect(client.sessions.events('otter-1', { from: 3 }))).toEqual([4, 5])
    expect(await collect(client.sessions.events('otter-1', { from: 0 }))).toEqual([1, 2, 3, 4, 5])
    expect(server!.connections.map((c) => c.lastEventId)).toEqual(['3', null])
    expect(() => client.sessions.events('otter-1', { from: -1 })).toThrow(RangeError)
  })

  it("from: 'live' asks for ?from=live, and resumes with Last-Event-ID (not from=live) after a drop", async () => {
    const twoRecords = Buffer.byteLength(sseRecord(1, log[0]!, 1) + sseRecord(2, log[1]!))
    const client = await start((n) =>
      n === 0 ? { kind: 'cut', afterBytes: twoRecords + 5, clean: true } : { kind: 'full' },
    )
    const seqs = await collect(client.sessions.events('otter-1', { from: 'live' }))
    expect(seqs).toEqual([1, 2, 3, 4, 5])
    expect(server!.connections.map((c) => [c.url, c.lastEventId])).toEqual([
      ['/sessions/otter-1/events?from=live', null],
      ['/sessions/otter-1/events', '2'],
    ])
  })

  it('aborting the signal ends the iteration quietly and closes the connection', async () => {
    const client = await start(() => ({ kind: 'full' }), { end: false })
    const ctl = new AbortController()
    const seqs: number[] = []
    for await (const ev of client.session.events('otter-1', { signal: ctl.signal })) {
      seqs.push(ev.seq)
      if (ev.seq === 2) ctl.abort()
    }
    expect(seqs).toEqual([1, 2])
    expect(server!.connections).toHaveLength(1)
  })

  it('break closes the connection; a stream iterates only once', async () => {
    const client = await start(() => ({ kind: 'full' }), { end: false })
    const stream = client.session.events('otter-1')
    for await (const ev of stream) if (ev.seq === 3) break
    expect(stream.lastEventId).toBe('3')
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/only once/)
  })

  it('the singular stream yields loop events with their SSE event name and counter', async () => {
    const raw = await rawServer(
      'retry: 1000\nid: 1\nevent: user_message\ndata: {"message_id":"m1","type":"user_message","data":{"message_id":"m1","text":"hi"},"turn":0,"timestamp":1}\n\n' +
        'id: 2\nevent: loop_event\ndata: {"message_id":"m1","type":"turn_start","data":{"prompt":"hi"},"turn":0,"timestamp":2}\n\n',
      false,
    )
    try {
      const items: unknown[] = []
      for await (const ev of createChimeraClient({ baseUrl: raw.baseUrl }).session.events('otter-1')) {
        items.push({ seq: ev.seq, event: ev.event, type: ev.type })
        if (ev.seq === 2) break
      }
      expect(items).toEqual([
        { seq: 1, event: 'user_message', type: 'user_message' },
        { seq: 2, event: 'loop_event', type: 'turn_start' },
      ])
    } finally {
      await raw.close()
    }
  })
})

describe('final answers and retried ones', () => {
  it('401 rejects with ChimeraApiError(unauthorized) at once, without reconnecting', async () => {
    const client = await start(() => ({ kind: 'status', status: 401 }))
    const err = await collect(client.sessions.events('otter-1')).catch((e: unknown) => e)
    expect(ChimeraApiError.is(err, 'unauthorized')).toBe(true)
    expect((err as ChimeraApiError).status).toBe(401)
    expect(server!.connections).toHaveLength(1)
  })

  it('404 session_not_found is final too', async () => {
    const client = await start(() => ({ kind: 'status', status: 404, body: '{"error":"session_not_found"}' }))
    await expect(collect(client.sessions.events('otter-1'))).rejects.toSatisfy((e) =>
      ChimeraApiError.is(e, 'session_not_found'),
    )
  })

  it('a 200 that is not an event stream is a protocol error', async () => {
    const client = await start(() => ({ kind: 'status', status: 200, body: '<html></html>', contentType: 'text/html' }))
    await expect(collect(client.sessions.events('otter-1'))).rejects.toSatisfy((e) =>
      ChimeraClientError.is(e, 'protocol'),
    )
  })

  it('a record whose data is not JSON, or whose type differs from its event name, is a protocol error', async () => {
    for (const body of [
      'id: 1\nevent: text_delta\ndata: {not json\n\n',
      'id: 1\nevent: text_delta\ndata: {"type":"turn_start"}\n\n',
      'id: x1\nevent: text_delta\ndata: {"type":"text_delta"}\n\n',
      'event: text_delta\ndata: {"type":"text_delta"}\n\n',
    ]) {
      const raw = await rawServer(body, true)
      try {
        await expect(
          collect(createChimeraClient({ baseUrl: raw.baseUrl }).sessions.events('otter-1')),
          body,
        ).rejects.toSatisfy((e) => ChimeraClientError.is(e, 'protocol'))
      } finally {
        await raw.close()
      }
    }
  })

  it('a silent connection is replaced after the idle timeout', async () => {
    const client = await start((n) => (n === 0 ? { kind: 'silent' } : { kind: 'full' }))
    const errors: unknown[] = []
    const seqs = await collect(
      client.sessions.events('otter-1', {
        reconnect: { idleTimeoutMs: 400, maxDelayMs: 5 },
        onRetry: (i) => errors.push(i.error),
      }),
    )
    expect(seqs).toEqual([1, 2, 3, 4, 5])
    expect(errors).toHaveLength(1)
    expect(String((errors[0] as Error).message)).toMatch(/no data for 400 ms/)
  })

  it('a gap makes it reconnect from the last id; the server fills it and nothing is counted missing', async () => {
    const client = await start((n) => (n === 0 ? { kind: 'skip', seq: 3 } : { kind: 'full' }))
    const stream = client.sessions.events('otter-1')
    expect(await collect(stream)).toEqual([1, 2, 3, 4, 5])
    expect(server!.connections.map((c) => c.lastEventId)).toEqual([null, '2'])
    expect(stream.stats.gaps).toBe(0)
  })

  it('a gap the server cannot fill is delivered past and counted once', async () => {
    const client = await start(() => ({ kind: 'skip', seq: 3 }))
    const stream = client.sessions.events('otter-1')
    expect(await collect(stream)).toEqual([1, 2, 4, 5])
    expect(stream.stats.gaps).toBe(1)
  })

  it('gives up after maxAttempts failed reconnections in a row', async () => {
    const client = await start(() => ({ kind: 'status', status: 503 }))
    const err = await collect(
      client.sessions.events('otter-1', { reconnect: { maxAttempts: 3, maxDelayMs: 2 } }),
    ).catch((e: unknown) => e)
    expect(ChimeraClientError.is(err, 'reconnect_exhausted')).toBe(true)
    expect(ChimeraApiError.is((err as Error).cause, 'service_unavailable')).toBe(true)
    expect(server!.connections).toHaveLength(4)
  })

  it('maxAttempts: 0 never reconnects', async () => {
    const client = await start(() => ({ kind: 'cut', afterBytes: 0, clean: true }))
    await expect(collect(client.sessions.events('otter-1', { reconnect: { maxAttempts: 0 } }))).rejects.toSatisfy((e) =>
      ChimeraClientError.is(e, 'reconnect_exhausted'),
    )
    expect(server!.connections).toHaveLength(1)
  })
})
