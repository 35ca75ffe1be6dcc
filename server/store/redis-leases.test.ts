/**
 * Session leases in the Redis store (redis-leases.ts), two instances over one private Redis:
 * the creating instance holds the lease, another sees it taken; once the lease is gone (it ran
 * out: simulated by deleting the key, or by an owner that stopped renewing), the other claims it
 * and the old owner's appends and queued prompts are refused (fencing) while the new owner's go
 * through; a held lease is renewed past its time-to-live, released when the manager says the
 * session is idle, and reported lost when another instance holds the key. The sweep: a lease
 * that ran out (its owner stopped renewing) is claimed by exactly one of several racing
 * instances and handed to its `expired` hook once; a renewed lease, a released one and a removed
 * session are never swept.
 */
import { createClient } from '@redis/client'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { startRedis, type TestRedis } from './fixtures/redis-server.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
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

async function instance(redis: TestRedis, instanceId: string, ttl?: number): Promise<RedisEventStore> {
  const store = new RedisEventStore({
    url: redis.url,
    instanceId,
    ...(ttl ? { leaseTtlMs: ttl, leaseRenewMs: Math.floor(ttl * 0.3) } : {}),
  })
  await store.connect()
  stops.push(() => store.close())
  return store
}

async function raw(redis: TestRedis) {
  const client = createClient({ url: redis.url })
  await client.connect()
  stops.push(async () => client.destroy())
  return client
}

/** Poll `check` every 20 ms until it holds (a gate on an outside clock: the lease's TTL), at most `ms`. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('session leases', () => {
  it('the creator holds the lease; after it is gone another instance claims it and the old owner cannot write', async () => {
    const redis = await server()
    const a = await instance(redis, 'instance-a')
    const b = await instance(redis, 'instance-b')
    const meta = sampleMeta('otter')
    const id = meta.session_id
    await a.create(meta, sampleSummary(meta))
    expect(a.leases!.holds(id)).toBe(true)
    expect(await b.leases!.claim(id)).toEqual({ kind: 'other', owner: 'instance-a' })
    expect(await a.leases!.claim(id)).toEqual({ kind: 'mine', fresh: false, length: 0 })
    expect(await b.leases!.claim('otter-00000000000000000000000000')).toEqual({ kind: 'none' })
    await a.append(sampleEvent(id, 1))
    // B cannot write while A holds the lease.
    await expect(b.append(sampleEvent(id, 2))).rejects.toMatchObject({ code: 'store_unavailable' })
    // The lease runs out (A paused past its TTL): B claims the session.
    await (await raw(redis)).del(`chimera:s:{${id}}:owner`)
    expect(await b.leases!.claim(id)).toEqual({ kind: 'mine', fresh: true, length: 1 })
    expect(await b.leases!.owner(id)).toBe('instance-b')
    // A, still believing it owns the session, is fenced off; B writes.
    await expect(a.append(sampleEvent(id, 2))).rejects.toMatchObject({
      code: 'store_unavailable',
      message: expect.stringMatching(/no longer holds the lease/),
    })
    await expect(
      a.queuePrompt(id, { message_id: 'm-late', text: 'late', accepted_at: 1, order: 0 }),
    ).rejects.toMatchObject({ code: 'store_unavailable' })
    await b.append(sampleEvent(id, 2))
    expect((await b.read(id)).map((e) => e.seq)).toEqual([1, 2])
    expect((await b.load(id))!.queued).toEqual([])
  })

  it('a claim after the lease’s time here ran out is not fresh when the key was still this instance’s', async () => {
    const redis = await server()
    const a = await instance(redis, 'instance-a')
    const meta = sampleMeta('otter')
    const id = meta.session_id
    await a.create(meta, sampleSummary(meta))
    // This instance's clock passes the lease's time before a renewal is told (its answer late);
    // Redis still holds the key as A's, so nobody else can have written.
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Date.now() + 2 * a.leases!.ttlMs)
      expect(a.leases!.holds(id)).toBe(false)
      expect(await a.leases!.claim(id)).toEqual({ kind: 'mine', fresh: false, length: 0 })
      expect(a.leases!.holds(id)).toBe(true)
    } finally {
      vi.useRealTimers()
    }
    // Gone from Redis (it ran out there too): the next claim is fresh.
    await (await raw(redis)).del(`chimera:s:{${id}}:owner`)
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      // Past the time the claim above gave it (two TTLs ahead, plus one).
      vi.setSystemTime(Date.now() + 4 * a.leases!.ttlMs)
      expect(await a.leases!.claim(id)).toEqual({ kind: 'mine', fresh: true, length: 0 })
    } finally {
      vi.useRealTimers()
    }
  })

  it('a held lease is renewed past its TTL, released once idle, lost to another holder; a stopped owner’s runs out', async () => {
    const redis = await server()
    const ttl = 600
    const a = await instance(redis, 'instance-a', ttl)
    const b = await instance(redis, 'instance-b', ttl)
    const r = await raw(redis)
    let idle = false
    const lost: string[] = []
    a.leases!.setHooks({ idle: () => idle, lost: (id) => lost.push(id) })
    const meta = sampleMeta('otter')
    const id = meta.session_id
    const owner = `chimera:s:{${id}}:owner`
    await a.create(meta, sampleSummary(meta))
    // Renewed: the key outlives three TTLs while A runs the session.
    const start = Date.now()
    await eventually(async () => {
      expect(await r.get(owner)).toBe('instance-a')
      return Date.now() - start > 3 * ttl
    })
    // Idle: released (the key is deleted, not left to run out).
    idle = true
    await eventually(async () => (await r.exists(owner)) === 0)
    expect(a.leases!.holds(id)).toBe(false)
    // Claimed again, then taken by someone else: reported lost.
    idle = false
    expect((await a.leases!.claim(id)).kind).toBe('mine')
    await r.set(owner, 'instance-c')
    await eventually(() => lost.length > 0)
    expect(lost).toEqual([id])
    expect(a.leases!.holds(id)).toBe(false)
    // An owner that stops renewing (as if killed): its lease runs out by itself and B claims it.
    await r.del(owner)
    expect((await a.leases!.claim(id)).kind).toBe('mine')
    await a.leases!.stop(false)
    expect((await b.leases!.claim(id)).kind).toBe('other')
    await eventually(async () => (await b.leases!.claim(id)).kind === 'mine')
  })

  it('a lease that ran out is swept once, by one of three racing instances; renewed, released and removed ones never', async () => {
    const redis = await server()
    const ttl = 600
    const a = await instance(redis, 'instance-a', ttl)
    const sweepers = await Promise.all(['b', 'c', 'd'].map((n) => instance(redis, `instance-${n}`, ttl)))
    const r = await raw(redis)
    const swept: string[] = []
    for (const [k, s] of sweepers.entries()) {
      s.leases!.setHooks({
        idle: () => true,
        lost: () => {},
        expired: async (id, length) => {
          swept.push(`${id}@${k}:${length}`)
          // Work under the lease (the manager loads the session and writes the closing events).
          await new Promise((ok) => setTimeout(ok, 30))
        },
      })
    }
    a.leases!.setHooks({ idle: () => false, lost: () => {} })
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      const meta = sampleMeta('otter')
      await a.create(meta, sampleSummary(meta))
      await a.append(sampleEvent(meta.session_id, 1))
      ids.push(meta.session_id)
    }
    // A released lease and a removed session leave the sweep's list.
    const released = sampleMeta('otter')
    await a.create(released, sampleSummary(released))
    await a.leases!.release(released.session_id)
    const removed = sampleMeta('otter')
    await a.create(removed, sampleSummary(removed))
    await a.remove(removed.session_id)
    expect(await r.zRange('chimera:leases', 0, -1)).toEqual(expect.arrayContaining(ids))
    expect(await r.zScore('chimera:leases', released.session_id)).toBeNull()
    expect(await r.zScore('chimera:leases', removed.session_id)).toBeNull()
    // While A renews, three TTLs of sweeping (and extra sweeps at once) take nothing.
    const start = Date.now()
    await eventually(async () => {
      await Promise.all(sweepers.map((s) => s.leases!.sweep()))
      return Date.now() - start > 3 * ttl
    })
    expect(swept).toEqual([])
    for (const id of ids) expect(await r.get(`chimera:s:{${id}}:owner`)).toBe('instance-a')
    // A stops renewing (as if killed): each session is swept once, by one instance, with its length.
    await a.leases!.stop(false)
    await eventually(async () => {
      await Promise.all(sweepers.map((s) => s.leases!.sweep()))
      return swept.length >= ids.length
    })
    // Racing sweeps after the take-over (the sweeper still holds the lease, then releases it) take nothing more.
    await eventually(async () => {
      await Promise.all(sweepers.map((s) => s.leases!.sweep()))
      return (await r.zCard('chimera:leases')) === 0
    })
    for (let i = 0; i < 5; i++) await Promise.all(sweepers.map((s) => s.leases!.sweep()))
    expect(swept.map((x) => x.split('@')[0]).sort()).toEqual([...ids].sort())
    expect(swept.every((x) => x.endsWith(':1'))).toBe(true)
    for (const id of ids) expect(await r.exists(`chimera:s:{${id}}:owner`)).toBe(0)
    console.log(
      `sweep: ${ids.length} expired leases, swept by ${swept.map((x) => 'bcd'[Number(x.split('@')[1]!.split(':')[0])]).join('')}`,
    )
  })
})
