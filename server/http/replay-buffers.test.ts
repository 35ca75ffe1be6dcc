/**
 * A replay's page and chunk buffers come from pools and are handed out again
 * (docs/decisions/0435-replay-buffers-reused.md): a page once its records were copied out, a
 * chunk buffer once the socket wrote it. Whatever the interleaving — replays at once sharing the
 * pools, clients that go away mid-replay, a client that reads slowly — each replay's bytes are
 * the store's records, and a stream holds only a few buffers at a time.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { socketTarget, type ServerTarget } from '../../conformance/harness/targets.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { sampleEvent } from '../store/fixtures/sample.ts'
import { eventFileName, eventlogRoot, newSessionId } from '../store/paths.ts'
import { pagePool } from '../store/segment.ts'
import { minimalSummary } from '../store/validate.ts'
import { pluralRecord } from './sse/event-map.ts'
import { encodeRecord } from './sse/format.ts'
import { fillPool } from './sse/sse-stream.ts'

let t: ServerTarget | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

/** Records per session and the size of each delta's text: about 10 MB, three segment pages. */
const EVENTS = 420
const TEXT = 24_000

/**
 * A session written straight to disk as the store lays it out (event files and segment, in the
 * writer's key order), each delta's text different; its records as a replay encodes them.
 */
function longSession(home: string, tag: string): { id: string; expected: string } {
  const id = newSessionId('otter')
  const dir = join(eventlogRoot(home), id)
  mkdirSync(dir, { recursive: true })
  const meta = {
    session_id: id,
    agent: 'otter' as const,
    cwd: '/tmp/work',
    model: 'offline',
    mode: 'build',
    created_at: new Date().toISOString(),
  }
  writeFileSync(join(dir, 'session.json'), `${JSON.stringify(meta, null, 2)}\n`)
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(minimalSummary(meta), null, 2)}\n`)
  const events: AnyEvent[] = []
  for (let seq = 1; seq <= EVENTS; seq++) {
    const type = seq === 1 ? 'user_message' : seq === 2 ? 'turn_start' : seq === EVENTS ? 'agent_result' : 'text_delta'
    const e = sampleEvent(id, seq, type)
    const data =
      type === 'text_delta'
        ? { text: `${tag} ${seq} "ü" `.padEnd(TEXT, String.fromCharCode(0x61 + (seq % 26))), step: 1 }
        : e.data
    events.push({ seq, id: e.id, session_id: id, type, turn: 0, ts: e.ts, data } as AnyEvent)
  }
  const lines = events.map((e) => `${JSON.stringify(e)}\n`)
  events.forEach((e, i) => writeFileSync(join(dir, eventFileName(e.seq, e.type)), lines[i]!))
  writeFileSync(join(dir, 'events.jsonl'), lines.join(''))
  return { id, expected: events.map((e) => encodeRecord(pluralRecord(e))).join('') }
}

interface Read {
  /** Destroy the connection once this many bytes arrived. */
  cutAfter?: number
  /** Take each piece only after a timer turn (a client slower than the server). */
  slow?: boolean
  /** Called on each piece received. */
  onData?(): void
}

/** `GET /sessions/{id}/events` from the start over node:http: the bytes received. */
function replay(id: string, o: Read = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${t!.baseUrl}/sessions/${id}/events`,
      { headers: { accept: 'text/event-stream', 'last-event-id': '0' } },
      (res) => {
        const chunks: Buffer[] = []
        let got = 0
        res.on('data', (c: Buffer) => {
          chunks.push(c)
          got += c.length
          o.onData?.()
          if (o.cutAfter !== undefined && got >= o.cutAfter) {
            req.destroy()
            resolve(Buffer.concat(chunks).toString())
          } else if (o.slow) {
            res.pause()
            setTimeout(() => res.resume(), 1)
          }
        })
        res.on('end', () => resolve(Buffer.concat(chunks).toString()))
        res.on('error', reject)
      },
    )
    req.on('error', (err) => (o.cutAfter === undefined ? reject(err) : undefined))
    req.end()
  })
}

/** The records of a whole replay's body (after the stream's opening, before its `end`). */
function records(body: string): string {
  expect(body).toMatch(/event: end\ndata: \{"session_id":"[^"]+","success":true\}\n\n$/)
  return body.slice(body.indexOf('id: 1\n'), body.lastIndexOf('event: end\n'))
}

/** Let the server let a session go; the store writes its checksum then (vouched replays). */
async function evict(id: string): Promise<void> {
  const m = t!.server.deps.manager
  m.evictIdle(1, Date.now() + 60_000)
  for (let i = 0; i < 400 && (await t!.server.deps.manager.store.readVouched?.(id)) === undefined; i++)
    await new Promise((r) => setTimeout(r, 5))
  expect(await m.store.readVouched?.(id)).toBeDefined()
}

describe('replay buffers taken from pools', () => {
  it('replays at once, cold and warm, sharing the pools, each send the store records byte for byte', async () => {
    t = await socketTarget()
    const a = longSession(t.home, 'a')
    const b = longSession(t.home, 'b')
    // The first replay of each loads it (no checksum yet): warm pages.
    expect(records(await replay(a.id))).toBe(a.expected)
    expect(records(await replay(b.id))).toBe(b.expected)
    await evict(a.id)
    await evict(b.id)
    const fills = fillPool.stats()
    const pages = pagePool.stats()
    // One of each session's replays is served from the vouched segment, the others load it.
    const bodies = await Promise.all([a, b, a, b, a, b].map((s) => replay(s.id)))
    bodies.forEach((body, i) => expect(records(body)).toBe((i % 2 === 0 ? a : b).expected))
    // Again with both live: warm pages only.
    const warm = await Promise.all([b, a, b, a].map((s) => replay(s.id)))
    warm.forEach((body, i) => expect(records(body)).toBe((i % 2 === 0 ? b : a).expected))
    // The pools were used, and handed buffers out again.
    const f = fillPool.stats()
    const p = pagePool.stats()
    expect(f.taken - fills.taken).toBeGreaterThan(10 * (f.allocated - fills.allocated))
    expect(p.taken - pages.taken).toBeGreaterThan(p.allocated - pages.allocated)
  })

  it('clients that go away mid-replay leave nothing behind that corrupts the next replays', async () => {
    t = await socketTarget()
    const a = longSession(t.home, 'a')
    expect(records(await replay(a.id))).toBe(a.expected)
    await evict(a.id)
    // Cut at several points, cold (the first) and warm, while full replays run beside them.
    const cut = [300_000, 1_000_000, 4_500_000, 7_000_000].map((n) => replay(a.id, { cutAfter: n }))
    const full = [replay(a.id), replay(a.id)]
    for (const body of await Promise.all(cut)) {
      const sent = body.slice(body.indexOf('id: 1\n'))
      expect(sent.length).toBeGreaterThan(200_000)
      expect(a.expected.startsWith(sent)).toBe(true)
    }
    for (const body of await Promise.all(full)) expect(records(body)).toBe(a.expected)
    // And after them, cold and warm again.
    await evict(a.id)
    const after = await Promise.all([replay(a.id), replay(a.id), replay(a.id)])
    for (const body of after) expect(records(body)).toBe(a.expected)
  })

  it('a slow reader holds a few buffers, not its whole replay, and gets the same bytes as a fast one', async () => {
    t = await socketTarget()
    const a = longSession(t.home, 'a')
    expect(records(await replay(a.id))).toBe(a.expected)
    await evict(a.id)
    const start = fillPool.stats()
    let most = 0
    const held = (): void => {
      const s = fillPool.stats()
      most = Math.max(most, s.taken - start.taken - (s.given - start.given))
    }
    const [slow, fast] = await Promise.all([replay(a.id, { slow: true, onData: held }), replay(a.id, { onData: held })])
    expect(records(slow)).toBe(a.expected)
    expect(records(fast)).toBe(a.expected)
    // Both replays' chunks (about 160 each) went through at most a handful of buffers at a time.
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(12)
  })
})
