/**
 * 200 sessions over three instances and one Redis (docs/scale-out.md): each session is created
 * on one instance in turn (A, B, C, A, …) with a turn that is still running when the streams
 * open, and its event stream is read on every instance at once; once that turn ended, every
 * stream is opened again after its last id, and a second turn is sent to the next instance in
 * turn (round-robin: it runs on whichever instance holds the session). Every stream must hold
 * every event of the session exactly once, in order, with no gap (ids 1…n, n the Redis stream's
 * length, the same records on all three), then `end` after each turn.
 */
import { createClient } from '@redis/client'
import { afterAll, describe, expect, it } from 'vitest'
import { startInstances, type Instances } from '../store/fixtures/instances.ts'
import { keys } from '../store/redis-shared.ts'
import { follow, gapsAndRepeats, type Followed } from '../store/fixtures/sse-follow.ts'

const SESSIONS = 200
/** Sessions created at once (a bounded pool: 2 cores run the three instances and Redis). */
const POOL = 20

let cluster: Instances | undefined
/** The 503s a second turn got before it was accepted (printed). */
const retried503: string[] = []
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
      cluster = await startInstances(3)
      const [a, b, c] = cluster.instances
      const instances = [a!, b!, c!]
      const watcher = createClient({ url: cluster.redis.url })
      await watcher.connect()
      const runs = await pooled(SESSIONS, POOL, async (i) => {
        const owner = instances[i % 3]!
        const created = await post(`${owner.url}/sessions`, {
          prompt: `!sleep 30\n!say session ${i} on ${owner.name}: one two three`,
        })
        expect(created.status).toBe(201)
        const id = created.json.session_id as string
        const first = await Promise.all(instances.map((inst) => follow(`${inst.url}/sessions/${id}/events`).done))
        // The second turn via the next instance, each stream resumed after the last id it saw.
        const resumed = first.map((f, k) =>
          follow(`${instances[k]!.url}/sessions/${id}/events`, {
            lastEventId: f.records.filter((r) => r.id !== undefined).at(-1)?.id ?? 0,
          }),
        )
        const via = instances[(i + 1) % 3]!
        // Sent as soon as the first turn ended: it races the owner's idle release of the lease (a
        // command claimed just as the owner lets the session go must run once and be answered as
        // such). A 503 is retried as any client would (bounded); a turn that then runs twice fails
        // the checks below, and any 503 fails the run.
        let sent = await post(`${via.url}/sessions/${id}/turns`, { prompt: `!say second turn of ${i} via ${via.name}` })
        for (let retry = 0; sent.status === 503 && retry < 20; retry++) {
          retried503.push(`${id}: ${String(sent.json.message)}`)
          await new Promise((r) => setTimeout(r, 200))
          sent = await post(`${via.url}/sessions/${id}/turns`, { prompt: `!say second turn of ${i} via ${via.name}` })
        }
        expect(sent.status, JSON.stringify(sent.json)).toBe(202)
        const second = await Promise.all(resumed.map((f) => f.done))
        const streams = first.map((f, k) => ({
          records: [...f.records, ...second[k]!.records],
          connections: [...f.connections, ...second[k]!.connections],
          ended: f.ended && second[k]!.ended,
        }))
        return { id, owner: owner.name, via: via.name, streams }
      })
      watcher.destroy()
      const redis = createClient({ url: cluster.redis.url })
      await redis.connect()
      try {
        const problems: string[] = []
        let events = 0
        for (const run of runs) {
          const stored = (await redis.xRange(keys(run.id).events, '-', '+')) ?? []
          const ids = stored.map((e) => Number(e.id.split('-')[0]))
          events += ids.length
          const expected = ids.map((_, k) => k + 1)
          if (JSON.stringify(ids) !== JSON.stringify(expected)) problems.push(`${run.id}: Redis ids ${ids.join(',')}`)
          const before = problems.length
          const withIds = (f: Followed): string =>
            JSON.stringify(f.records.filter((r) => r.id !== undefined).map((r) => [r.id, r.event, r.data]))
          run.streams.forEach((f, k) => {
            const where = `${run.id} (created on ${run.owner}, second turn via ${run.via}) on ${instances[k]!.name}`
            if (!f.ended) problems.push(`${where}: no end`)
            const ends = f.records.filter((r) => r.event === 'end').length
            if (ends !== 2) problems.push(`${where}: ${ends} end records, not one per turn`)
            for (const p of gapsAndRepeats(f.records.filter((r) => r.event !== 'end'))) problems.push(`${where}: ${p}`)
            const got = f.records.filter((r) => r.id !== undefined).map((r) => r.id)
            if (JSON.stringify(got) !== JSON.stringify(expected))
              problems.push(`${where}: ids ${got.join(',')} but Redis holds 1..${expected.length}`)
            if (withIds(f) !== withIds(run.streams[0]!)) problems.push(`${where}: records differ from A's`)
          })
          // What Redis holds of a session with a problem (its events' types and error messages).
          if (problems.length > before)
            problems.push(
              `${run.id} in Redis: ${stored
                .map((e) => {
                  const ev = JSON.parse(String(e.message.e)) as { type: string; data: { message?: string } }
                  return ev.type === 'error' ? `error(${ev.data.message ?? ''})` : ev.type
                })
                .join(' ')}`,
            )
          if (run.streams[0]!.records.filter((r) => r.event === 'agent_result').length !== 2)
            problems.push(
              `${run.id}: no agent_result: ${JSON.stringify(run.streams[0]!.records.map((r) => [r.id, r.event, r.data.slice(0, 300)]))}`,
            )
        }
        expect({ problems: problems.slice(0, 20), retried503 }).toEqual({ problems: [], retried503: [] })
        // Each turn writes several events: every stream carried all of them.
        expect(events).toBeGreaterThanOrEqual(SESSIONS * 8)
        // No command that ran was answered 503 (the release race of the lease's handover).
        expect(retried503).toEqual([])
        console.log(
          `200 sessions: ${runs.length} sessions, 2 turns each (the second via the next instance), ${events} events, ${runs.length * 3} streams on 3 instances (${events * 3} records, each stream opened twice), 0 gaps, 0 repeats; second turns answered 503 first: ${retried503.length}${retried503.length ? ` (${retried503[0]})` : ''}`,
        )
      } finally {
        redis.destroy()
      }
    },
  )
})
