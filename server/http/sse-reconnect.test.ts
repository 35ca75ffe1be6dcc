/**
 * Exactly-once delivery across reconnects, with an independent client: the `eventsource` npm
 * package reads a session's stream through a TCP proxy that cuts the connection (mid-frame
 * when it happens to) every few events while turns keep producing events. The client
 * reconnects on its own with `Last-Event-ID`; at the end every event id from 1 to the log's
 * last seq has arrived exactly once, in order. The run's counts are printed (sent, received,
 * duplicated, missing, reconnects).
 */
import { createConnection, createServer, type Socket } from 'node:net'
import { EventSource } from 'eventsource'
import { afterEach, describe, expect, it } from 'vitest'
import { socketTarget, type ServerTarget } from '../../conformance/harness/targets.ts'

/** A loopback TCP proxy whose live connections can be cut at once. */
async function cuttingProxy(
  target: URL,
): Promise<{ url: string; cut(): number; connections: number; resumedFrom: string[]; close(): Promise<void> }> {
  const open = new Set<Socket>()
  let connections = 0
  /** Each connection's `Last-Event-ID` (`-` when it sent none), in the order they came. */
  const resumedFrom: string[] = []
  const server = createServer((client) => {
    connections++
    const at = resumedFrom.push('?') - 1
    let head = ''
    const readHead = (d: Buffer): void => {
      head += d.toString('latin1')
      if (!head.includes('\r\n\r\n') && head.length < 8192) return
      client.off('data', readHead)
      resumedFrom[at] = /^last-event-id: *(\S*)/im.exec(head)?.[1] ?? '-'
    }
    client.on('data', readHead)
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) })
    open.add(client).add(upstream)
    const drop = (): void => {
      client.destroy()
      upstream.destroy()
      open.delete(client)
      open.delete(upstream)
    }
    client.on('error', drop).on('close', drop)
    upstream.on('error', drop).on('close', drop)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}`,
    /** Destroy the live connections; how many there were (none while the client is away). */
    cut: () => {
      const n = open.size
      for (const s of open) s.destroy()
      open.clear()
      return n
    },
    get connections() {
      return connections
    },
    resumedFrom,
    close: () =>
      new Promise((r) => {
        for (const s of open) s.destroy()
        server.close(() => r())
      }),
  }
}

let target: ServerTarget | undefined
afterEach(async () => {
  await target?.close()
  target = undefined
})

describe('SSE resume with the eventsource client', () => {
  it('reconnects after the connection is cut mid-stream and receives every event exactly once', async () => {
    target = await socketTarget({ sse: { retryMs: 10 } })
    const api = (path: string, body?: unknown): Promise<Response> =>
      fetch(`${target!.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    const { session_id: id } = (await (await api('/session')).json()) as { session_id: string }
    const proxy = await cuttingProxy(new URL(target.baseUrl))
    const received: number[] = []
    /** The proxy connection each event arrived on (what tells a client repeat from a server one). */
    const arrivedOn: number[] = []
    const CUT_EVERY = 20
    const TURNS = 40
    let cuts = 0
    let sinceCut = 0
    const es = new EventSource(`${proxy.url}/session/${id}/events`)
    const onEvent = (ev: MessageEvent): void => {
      received.push(Number(ev.lastEventId))
      arrivedOn.push(proxy.connections)
      // Cut while turns are still writing: the next events land while the client is away. Events
      // the client still parses from a connection already cut (one chunk can hold many) find no
      // connection to cut: only a cut of a live connection counts.
      if (++sinceCut >= CUT_EVERY && cuts < 10 && proxy.cut() > 0) {
        cuts++
        sinceCut = 0
      }
    }
    for (const type of ['user_message', 'loop_event', 'result']) es.addEventListener(type, onEvent)
    try {
      await new Promise<void>((resolve, reject) => {
        es.onopen = () => resolve()
        setTimeout(() => reject(new Error('the stream did not open')), 5000).unref()
      })
      for (let i = 0; i < TURNS; i++)
        expect((await api(`/session/${id}/message`, { message: `!say turn ${i} of ${TURNS}` })).status).toBe(202)
      const session = target.server.deps.manager.peek(id)!
      await session.idle()
      await session.flush()
      const sent = session.lastSeq
      const deadline = Date.now() + 10_000
      while (new Set(received).size < sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      const seen = new Map<number, number>()
      for (const n of received) seen.set(n, (seen.get(n) ?? 0) + 1)
      const duplicated = [...seen.values()].filter((c) => c > 1).length
      const missing = Array.from({ length: sent }, (_, i) => i + 1).filter((n) => !seen.has(n)).length
      console.info(
        `SSE resume run: sent=${sent} received=${received.length} duplicated=${duplicated} missing=${missing} cuts=${cuts} connections=${proxy.connections}`,
      )
      expect(sent).toBeGreaterThanOrEqual(TURNS * 7)
      expect(cuts).toBe(10)
      expect(proxy.connections).toBeGreaterThanOrEqual(cuts + 1)
      // On a failure: each repeated id with the connections it came on, and each connection's
      // Last-Event-ID, so a resume from too early (server) is told from a repeat within one
      // connection (client).
      const repeats = [...seen].flatMap(([n, c]) =>
        c > 1 ? [`${n} on ${arrivedOn.filter((_, i) => received[i] === n).join('+')}`] : [],
      )
      const why = `repeated: ${repeats.join(', ') || 'none'}; Last-Event-ID per connection: ${proxy.resumedFrom.join(' ')}`
      expect({ duplicated, missing }, why).toEqual({ duplicated: 0, missing: 0 })
      expect(received).toEqual(Array.from({ length: sent }, (_, i) => i + 1))
    } finally {
      es.close()
      await proxy.close()
    }
  }, 30_000)
})
