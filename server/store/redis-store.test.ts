/**
 * The Redis store against a real redis-server of its own (fixtures/redis-server.ts): the store
 * contract (round trip, counter checks, queued prompts, summaries, the audit list, removal), what
 * only a shared store has (two store instances over one Redis: one appends, the other streams
 * live, each event once and in order), and the failures: Redis killed mid-stream (writes fail
 * with `store_unavailable` meanwhile, nothing acknowledged is lost, the stream resumes without a
 * gap or a repeat), Redis unreachable at start (one clear error).
 */
import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import { redisStoreForTest, startRedis, type TestRedis } from './fixtures/redis-server.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { RedisEventStore, storeUrl } from './redis-store.ts'
import type { AuditRecord } from './audit-store.ts'

const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

async function server(): Promise<TestRedis> {
  const redis = await startRedis()
  stops.push(() => redis.stop())
  return redis
}

async function storeOn(redis: TestRedis): Promise<RedisEventStore> {
  const store = new RedisEventStore({ url: redis.url })
  await store.connect()
  stops.push(() => store.close())
  return store
}

async function session(store: RedisEventStore): Promise<string> {
  const meta = sampleMeta('otter')
  await store.create(meta, sampleSummary(meta))
  return meta.session_id
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

/** Collect a stream's seqs until `n` arrived (bounded by a 20 s abort), then stop it. */
function collect(store: RedisEventStore, id: string, afterSeq: number, n: number) {
  const ctl = new AbortController()
  const seqs: number[] = []
  const timer = setTimeout(() => ctl.abort(), 20_000)
  const done = (async () => {
    for await (const e of store.stream(id, { afterSeq, signal: ctl.signal })) {
      seqs.push(e.seq)
      if (seqs.length >= n) break
    }
    clearTimeout(timer)
    return seqs
  })()
  return { seqs, done }
}

/** Retry `fn` until it resolves (Redis coming back), at most `ms`. */
async function eventually<T>(fn: () => Promise<T>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    try {
      return await fn()
    } catch (err) {
      if (Date.now() > until) throw err
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

describe('Redis store contract', () => {
  it('round-trips meta, summary and events; stream ids are the seqs', async () => {
    const redis = await server()
    const store = await storeOn(redis)
    const meta = sampleMeta('ferret')
    await store.create(meta, sampleSummary(meta))
    const sent = range(1, 12).map((n) => sampleEvent(meta.session_id, n))
    for (const e of sent) await store.append(e)
    const other = await storeOn(redis)
    const loaded = await other.load(meta.session_id)
    expect(loaded).toEqual({ meta, summary: sampleSummary(meta), events: sent, queued: [], repaired: false })
    expect(await other.read(meta.session_id, 9)).toEqual(sent.slice(9))
    await other.writeSummary(meta.session_id, { session_id: meta.session_id, model: 'm2', started_at: meta.created_at })
    expect((await store.load(meta.session_id))?.summary).toMatchObject({ model: 'm2' })
    // A summary of fewer events than the stored one's is a late write of a copy that lost the
    // session: the stored one stays.
    await store.writeSummary(meta.session_id, { session_id: meta.session_id, model: 'm3', event_count: 2 })
    await other.writeSummary(meta.session_id, { session_id: meta.session_id, model: 'late', event_count: 1 })
    expect((await store.load(meta.session_id))?.summary).toMatchObject({ model: 'm3', event_count: 2 })
    await other.writeSummary(meta.session_id, { session_id: meta.session_id, model: 'm4', event_count: 2 })
    expect((await store.load(meta.session_id))?.summary).toMatchObject({ model: 'm4', event_count: 2 })
  })

  it('refuses gaps, other events at a taken seq, unknown sessions and a second create; the same event again is accepted', async () => {
    const redis = await server()
    const store = await storeOn(redis)
    const id = await session(store)
    const first = sampleEvent(id, 1)
    await store.append(first)
    await expect(store.append(sampleEvent(id, 3))).rejects.toMatchObject({
      code: 'seq_mismatch',
      detail: { expected: 2 },
    })
    // A retry of an append whose reply was lost: already there, accepted, not doubled.
    await store.append(first)
    const different = { ...sampleEvent(id, 1, 'text_delta'), data: { text: 'other' } } as AnyEvent
    await expect(store.append(different)).rejects.toMatchObject({ code: 'seq_mismatch' })
    expect((await store.read(id)).map((e) => e.seq)).toEqual([1])
    const unknown = sampleMeta('mink').session_id
    await expect(store.append(sampleEvent(unknown, 1))).rejects.toMatchObject({ code: 'session_not_found' })
    await expect(store.read(unknown)).rejects.toMatchObject({ code: 'session_not_found' })
    await expect(store.writeSummary(unknown, { session_id: unknown })).rejects.toMatchObject({
      code: 'session_not_found',
    })
    expect(await store.load(unknown)).toBeUndefined()
    await expect(store.load('../x')).rejects.toMatchObject({ code: 'invalid_session_id' })
    const meta = (await store.load(id))!.meta
    await expect(store.create(meta, sampleSummary(meta))).rejects.toMatchObject({ code: 'session_exists' })
  })

  it('keeps queued prompts until unqueued, in queue order; remove forgets the session everywhere', async () => {
    const redis = await server()
    const store = await storeOn(redis)
    const id = await session(store)
    const p = (n: number) => ({ message_id: `msg-${n}`, text: `p${n}`, accepted_at: 1000, order: n })
    await store.queuePrompt(id, p(2))
    await store.queuePrompt(id, p(1))
    await store.queuePrompt(id, p(3))
    await store.unqueuePrompt(id, 'msg-2')
    expect((await store.load(id))?.queued).toEqual([p(1), p(3)])
    await store.append(sampleEvent(id, 1))
    expect((await store.list()).map((s) => s.session_id)).toEqual([id])
    await store.remove(id)
    expect(await store.load(id)).toBeUndefined()
    expect(await store.list()).toEqual([])
    await expect(store.queuePrompt(id, p(4))).rejects.toMatchObject({ code: 'session_not_found' })
  })

  it('keeps always/never decisions in one list every instance reads', async () => {
    const redis = await server()
    const a = (await storeOn(redis)).auditStore()
    const b = (await storeOn(redis)).auditStore()
    const rec = (key: string): AuditRecord => ({
      ts: '2026-04-25T12:00:00Z',
      session_id: 's',
      cwd: '/w',
      tool: 'Bash',
      key,
      decision: 'always',
    })
    await a.append(rec('ls'))
    await b.append(rec('pwd'))
    expect((await a.load()).map((r) => r.key)).toEqual(['ls', 'pwd'])
  })
})

describe('Redis store shared by instances', () => {
  it('an event appended on one instance reaches streams on another, each once and in order', async () => {
    const redis = await server()
    const writer = await storeOn(redis)
    const reader = await storeOn(redis)
    const id = await session(writer)
    for (const n of range(1, 30)) await writer.append(sampleEvent(id, n))
    const fromStart = collect(reader, id, 0, 200)
    const fromCursor = collect(reader, id, 25, 175)
    for (const n of range(31, 200)) await writer.append(sampleEvent(id, n))
    expect(await fromStart.done).toEqual(range(1, 200))
    expect(await fromCursor.done).toEqual(range(26, 200))
  })
})

describe('Redis store failures', () => {
  it('Redis killed mid-stream: writes fail with store_unavailable, nothing acknowledged is lost, the stream resumes without a gap', async () => {
    const redis = await server()
    const writer = await storeOn(redis)
    const reader = await storeOn(redis)
    const id = await session(writer)
    const stream = collect(reader, id, 0, 100)
    for (const n of range(1, 50)) await writer.append(sampleEvent(id, n))
    await redis.kill()
    const refused = await writer.append(sampleEvent(id, 51)).then(
      () => undefined,
      (err: unknown) => err,
    )
    expect(refused).toMatchObject({ code: 'store_unavailable', message: /Redis store is unavailable/ })
    await redis.start()
    // The client reconnects with backoff; the refused event is written again, then the rest.
    for (const n of range(51, 100)) await eventually(() => writer.append(sampleEvent(id, n)))
    expect(await stream.done).toEqual(range(1, 100))
    const fresh = await storeOn(redis)
    expect((await fresh.read(id)).map((e) => e.seq)).toEqual(range(1, 100))
  })

  it('a Redis that stops answering (SIGSTOP, the socket stays open) fails writes as store_unavailable, not never', async () => {
    const redis = await server()
    const store = new RedisEventStore({ url: redis.url, commandTimeoutMs: 300 })
    await store.connect()
    stops.push(() => store.close())
    const id = await session(store)
    const pid = redis.pid
    process.kill(pid, 'SIGSTOP')
    // Runs before the server is stopped (last in, first out), even if the write below hangs.
    stops.push(async () => {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {}
    })
    try {
      // No timer here: the store's own command timeout must end the write.
      const refused = await store
        .queuePrompt(id, { message_id: 'm1', text: 'hi', accepted_at: Date.now(), order: 0 })
        .then(
          () => 'acknowledged',
          (err: unknown) => err,
        )
      expect(refused).toMatchObject({ code: 'store_unavailable' })
    } finally {
      process.kill(pid, 'SIGCONT')
    }
  })

  it('Redis unreachable at start is one clear error', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const addr = srv.address()
        srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0))
      })
    })
    const store = new RedisEventStore({ url: `redis://127.0.0.1:${port}/0` })
    await expect(store.connect()).rejects.toThrow(
      new RegExp(`^cannot reach the Redis store at redis://127\\.0\\.0\\.1:${port}/0: .*ECONNREFUSED`),
    )
  })
})

describe('--store', () => {
  it('a usage error never prints the password of the URL it refuses', () => {
    for (const bad of [
      'redis://:hunter2@db.internal:6379/abc',
      'http://u:hunter2@db.internal/0',
      'redis://:hunter2@[::1',
    ]) {
      let message = ''
      try {
        storeUrl(bad, {})
      } catch (err) {
        message = (err as Error).message
      }
      expect(message).toMatch(/^--store/)
      expect(message).not.toContain('hunter2')
    }
  })
})

describe('redisStoreForTest', () => {
  it('leaves no redis-server behind', async () => {
    const local: (() => Promise<void>)[] = []
    const store = await redisStoreForTest(local)
    expect(await store.list()).toEqual([])
    for (const stop of local.reverse()) await stop()
    await expect(store.list()).rejects.toMatchObject({ code: 'store_unavailable' })
  })
})
