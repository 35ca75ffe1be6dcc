/**
 * The singular family's live sessions and token digests in the Redis store (redis-live.ts), two
 * instances over one private Redis: a token set on one is found from the other by its digest; a
 * new token kills the old one; a dropped or forgotten one is gone; a session is live while touched
 * within the TTL (on either instance), listed most recently touched first, and its token dies
 * with it; a deleted session is never made live again by a late touch.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { until } from '../core/fixtures/harness.ts'
import { startRedis, type TestRedis } from './fixtures/redis-server.ts'
import { sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { RedisEventStore } from './redis-store.ts'

const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

async function server(): Promise<TestRedis> {
  const redis = await startRedis()
  stops.push(() => redis.stop())
  return redis
}

async function instance(redis: TestRedis, instanceId: string): Promise<RedisEventStore> {
  const store = new RedisEventStore({ url: redis.url, instanceId })
  await store.connect()
  stops.push(() => store.close())
  return store
}

async function stored(store: RedisEventStore): Promise<string> {
  const meta = sampleMeta()
  await store.create(meta, sampleSummary(meta))
  return meta.session_id
}

describe('live sessions and tokens shared through Redis', () => {
  it('finds a token set on one instance from another, by digest; rotation, drop and delete kill it', async () => {
    const redis = await server()
    const [a, b] = [await instance(redis, 'A'), await instance(redis, 'B')]
    const [la, lb] = [a.liveSessions(0), b.liveSessions(0)]
    const s = await stored(a)
    expect(await la.setToken(s, 'aa'.repeat(32))).toBe(true)
    expect(await lb.sessionOfToken('aa'.repeat(32))).toBe(s)
    expect(await lb.list()).toEqual([s])
    expect(await lb.setToken(s, 'bb'.repeat(32))).toBe(true)
    expect(await la.sessionOfToken('aa'.repeat(32))).toBeUndefined()
    expect(await la.sessionOfToken('bb'.repeat(32))).toBe(s)
    await la.dropToken(s)
    expect(await lb.sessionOfToken('bb'.repeat(32))).toBeUndefined()
    // Not a stored session: no token, never live.
    expect(await la.setToken('otter-20260101T000000Z-0000aaaa', 'cc'.repeat(32))).toBe(false)
    expect(await la.touch('otter-20260101T000000Z-0000aaaa')).toBe(false)
    await lb.setToken(s, 'dd'.repeat(32))
    await a.remove(s)
    await la.forget(s)
    expect(await lb.sessionOfToken('dd'.repeat(32))).toBeUndefined()
    expect(await lb.list()).toEqual([])
    // A touch published late does not bring a deleted session back.
    await lb.touched(new Map([[s, Date.now()]]))
    expect(await la.list()).toEqual([])
  })

  it('keeps a session live while it is touched within the TTL on any instance; its token dies with it', async () => {
    const redis = await server()
    const [a, b] = [await instance(redis, 'A'), await instance(redis, 'B')]
    const ttl = 300
    const [la, lb] = [a.liveSessions(ttl), b.liveSessions(ttl)]
    const s1 = await stored(a)
    const s2 = await stored(a)
    await la.setToken(s1, 'aa'.repeat(32))
    // A later touch (a later millisecond: two in the same one tie, ordered by id) lists first.
    const t1 = Date.now()
    await until(() => Promise.resolve(Date.now() > t1), 1000, 'the next millisecond')
    await lb.touch(s2)
    expect(await la.list()).toEqual([s2, s1])
    await la.touched(new Map([[s1, Date.now() + 1]]))
    expect(await lb.list()).toEqual([s1, s2])
    expect(await lb.touch(s1, { ifLive: true })).toBe(true)
    // Nobody touches them: past the TTL neither is live, the token is dead, if-live touches fail.
    // (a gate on an outside clock: the TTL)
    await until(async () => (await la.list()).length === 0, 10_000, 'the TTL to pass')
    expect(await lb.sessionOfToken('aa'.repeat(32))).toBeUndefined()
    expect(await lb.touch(s1, { ifLive: true })).toBe(false)
    // A plain touch (a turn added through the plural family) makes it live again.
    expect(await lb.touch(s2)).toBe(true)
    expect(await la.list()).toEqual([s2])
  })
})
