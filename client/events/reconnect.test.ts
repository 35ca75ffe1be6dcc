/**
 * Exactly-once delivery across drops: a controllable SSE server cuts the connection at random
 * byte offsets (mid-record, mid-line and mid-UTF-8 character included), closes cleanly before
 * the end, answers 503, and replays older records again, 50 times in one run; the delivered
 * sequence must be exactly 1..N. The PRNG is seeded (CHIMERA_TEST_SEED repeats a run) and the
 * seed is in every failure message.
 */
import { afterEach, describe, expect, it, onTestFailed } from 'vitest'
import { createChimeraClient } from '../api.ts'
import { sseRecord, startSseServer, type Plan, type SseServer } from './fixtures/sse-server.ts'
import { prng } from '../wire/fixtures/seeded-random.ts'
import type { RetryInfo } from './event-stream.ts'

const N = 300
const DROPS = 50
/** Text with multi-byte characters, so random cuts land inside UTF-8 sequences too. */
const log = Array.from({ length: N }, (_, i) => ({
  type: 'text_delta',
  metadata: { text: `chunk ${i + 1} — é✓😀 ${'x'.repeat(i % 37)}` },
}))

let server: SseServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('session event stream: exactly once across drops', () => {
  it(`delivers 1..${N} exactly once and in order through ${DROPS} random drops`, async () => {
    const seed = Number(process.env.CHIMERA_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31))
    onTestFailed(() => {
      process.stderr.write(`reconnect test failed with seed ${seed} (repeat: CHIMERA_TEST_SEED=${seed})\n`)
    })
    const rand = prng(seed)
    const planned: Plan['kind'][] = []
    let drops = 0
    server = await startSseServer({
      log,
      retryMs: 1,
      plan: (n, _conn, bytes) => {
        if (drops >= DROPS) return { kind: 'full' }
        drops++
        const roll = rand()
        const cut: Plan = { kind: 'cut', afterBytes: Math.floor(rand() * bytes), clean: rand() < 0.3 }
        // Most drops cut the bytes; some answer 503 first; some replay older records before cutting.
        const plan: Plan =
          roll < 0.1
            ? { kind: 'status', status: 503 }
            : roll < 0.3
              ? { kind: 'overlap', back: 1 + Math.floor(rand() * 5), then: cut }
              : cut
        planned.push(plan.kind === 'overlap' ? 'overlap' : plan.kind)
        return plan
      },
    })
    const retries: RetryInfo[] = []
    const client = createChimeraClient({ baseUrl: server.baseUrl, token: 'tok' })
    const stream = client.sessions.events('otter-test', {
      reconnect: { random: rand, maxDelayMs: 20 },
      onRetry: (i) => retries.push(i),
    })
    const seqs: number[] = []
    for await (const ev of stream) {
      seqs.push(ev.seq)
      expect(ev.type, `seed ${seed}`).toBe('text_delta')
      if (ev.type === 'text_delta') expect(ev.metadata.text, `seed ${seed}`).toBe(log[ev.seq - 1]!.metadata.text)
    }
    const expected = Array.from({ length: N }, (_, i) => i + 1)
    const dupes = seqs.length - new Set(seqs).size
    const gaps = expected.filter((s) => !seqs.includes(s)).length
    process.stderr.write(
      `exactly-once: seed ${seed}, drops ${drops} (${planned.filter((k) => k === 'cut').length} cuts, ${planned.filter((k) => k === 'overlap').length} replays-then-cut, ${planned.filter((k) => k === 'status').length} × 503), ` +
        `connections ${server.connections.length}, events ${seqs.length}/${N}, duplicates delivered ${dupes}, duplicates dropped ${stream.stats.duplicates}, gaps ${gaps}\n`,
    )
    expect(drops, `seed ${seed}`).toBe(DROPS)
    expect(seqs, `seed ${seed}`).toEqual(expected)
    expect(stream.end, `seed ${seed}`).toEqual({ session_id: 'otter-test', success: true })
    expect(stream.stats.gaps).toBe(0)
    // One connection per drop plus the last, full one; every reconnection resumed from the last delivered id.
    expect(server.connections.length, `seed ${seed}`).toBe(DROPS + 1)
    expect(retries.length, `seed ${seed}`).toBe(DROPS)
    for (const [i, r] of retries.entries())
      expect(server.connections[i + 1]!.lastEventId, `seed ${seed}, reconnection ${i + 1}`).toBe(r.lastEventId ?? null)
    expect(server.connections.every((c) => c.authorization === 'Bearer tok')).toBe(true)
  })

  it('honours retry: and backs off with jitter while attempts fail, starting over after progress; onOpen per stream answered', async () => {
    server = await startSseServer({
      log: log.slice(0, 3),
      retryMs: 40,
      // 1: one record then a cut; 2–4: 503 (no progress); 5: the rest.
      plan: (n) =>
        n === 0
          ? { kind: 'cut', afterBytes: Buffer.byteLength(sseRecord(1, log[0]!, 40)), clean: true }
          : n <= 3
            ? { kind: 'status', status: 503 }
            : { kind: 'full' },
    })
    const retries: RetryInfo[] = []
    const opens: number[] = []
    const stream = createChimeraClient({ baseUrl: server.baseUrl }).sessions.events('otter-test', {
      reconnect: { random: () => 0.5, initialDelayMs: 5000 },
      onRetry: (i) => retries.push(i),
      onOpen: () => opens.push(retries.length),
    })
    const seqs: number[] = []
    for await (const ev of stream) seqs.push(ev.seq)
    expect(seqs).toEqual([1, 2, 3])
    // The server's retry: 40 replaces the 5000 default; each failed attempt doubles it; jitter 0.5 → 3/4 of the base.
    expect(retries.map((r) => [r.attempt, r.retryMs, r.delayMs])).toEqual([
      [1, 40, 30],
      [2, 40, 60],
      [3, 40, 120],
      [4, 40, 240],
    ])
    expect(retries.map((r) => r.lastEventId)).toEqual(['1', '1', '1', '1'])
    // onOpen fires for each connection answered with a stream (the first and the fifth), not for the 503s.
    expect(opens).toEqual([0, 4])
  })
})
