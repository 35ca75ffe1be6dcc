/**
 * 200 sessions over three instances and one Redis (docs/scale-out.md): each session is created
 * on one instance in turn (A, B, C, A, …) with a turn that is still running when the streams
 * open, and its event stream is read on every instance at once. Every stream must hold every
 * event of the session exactly once, in order, with no gap (ids 1…n, n the Redis stream's
 * length, the same records on all three), then `end`.
 */
import { createClient } from '@redis/client'
import { afterAll, describe, expect, it } from 'vitest'
import { startInstances, type Instances } from '../store/fixtures/instances.ts'
import { follow, gapsAndRepeats, type Followed } from '../store/fixtures/sse-follow.ts'

const SESSIONS = 200
/** Sessions created at once (a bounded pool: 2 cores run the three instances and Redis). */
const POOL = 20

let cluster: Instances | undefined
afterAll(async () => {
  await cluster?.stop()
})

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

/** Run `job(i)` for i in [0, n) with at most `pool` at once. */
async function pooled<T>(n: number, pool: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(n)
  let next = 0
  await Promise.all(
    Array.from({ length: pool }, async () => {
      while (next < n) {
        const i = next++
        out[i] = await job(i)
      }
    }),
  )
  return out
}

describe('200 sessions across three instances', () => {
  it(
    'every event exactly once, in order, on every instance’s stream of every session',
    { timeout: 240_000 },
    async () => {
      cluster = await startInstances({ args: ['--approval', 'allow'] })
      const [a, b, c] = cluster.list
      const instances = [a!, b!, c!]
      const runs = await pooled(SESSIONS, POOL, async (i) => {
        const owner = instances[i % 3]!
        const created = await post(`${owner.url}/sessions`, {
          prompt: `!sleep 30\n!say session ${i} on ${owner.name}: one two three`,
        })
        expect(created.status).toBe(201)
        const id = created.json.session_id as string
        const streams = instances.map((inst) => follow(`${inst.url}/sessions/${id}/events`))
        return { id, owner: owner.name, streams: await Promise.all(streams.map((s) => s.done)) }
      })
      const redis = createClient({ url: cluster.redis.url })
      await redis.connect()
      try {
        const problems: string[] = []
        let events = 0
        for (const run of runs) {
          const stored = (await redis.xRange(`chimera:s:{${run.id}}:events`, '-', '+')) ?? []
          const ids = stored.map((e) => Number(e.id.split('-')[0]))
          events += ids.length
          const expected = ids.map((_, k) => k + 1)
          if (JSON.stringify(ids) !== JSON.stringify(expected)) problems.push(`${run.id}: Redis ids ${ids.join(',')}`)
          const withIds = (f: Followed): string =>
            JSON.stringify(f.records.filter((r) => r.id !== undefined).map((r) => [r.id, r.event, r.data]))
          run.streams.forEach((f, k) => {
            const where = `${run.id} (created on ${run.owner}) on ${instances[k]!.name}`
            if (!f.ended) problems.push(`${where}: no end`)
            for (const p of gapsAndRepeats(f.records)) problems.push(`${where}: ${p}`)
            const got = f.records.filter((r) => r.id !== undefined).map((r) => r.id)
            if (JSON.stringify(got) !== JSON.stringify(expected))
              problems.push(`${where}: ids ${got.join(',')} but Redis holds 1..${expected.length}`)
            if (withIds(f) !== withIds(run.streams[0]!)) problems.push(`${where}: records differ from A's`)
          })
          if (!run.streams[0]!.records.some((r) => r.event === 'agent_result'))
            problems.push(
              `${run.id}: no agent_result: ${JSON.stringify(run.streams[0]!.records.map((r) => [r.id, r.event, r.data.slice(0, 300)]))}`,
            )
        }
        expect(problems.slice(0, 20)).toEqual([])
        // Each turn writes several events: every stream carried all of them.
        expect(events).toBeGreaterThanOrEqual(SESSIONS * 4)
        console.log(
          `200 sessions: ${runs.length} sessions, ${events} events, ${runs.length * 3} streams (${events * 3} records), 0 gaps, 0 repeats`,
        )
      } finally {
        redis.destroy()
      }
    },
  )
})
