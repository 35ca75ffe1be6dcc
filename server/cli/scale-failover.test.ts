/**
 * The owner of a running session SIGKILLed mid-turn, ten times, under three instances over one
 * Redis (docs/scale-out.md "What each failure does"; the single run and the cross-instance flow:
 * redis-instances.test.ts). Each time, with no command sent, the session's streams on every
 * instance (the dead instance's client reconnecting to another with Last-Event-ID) see the
 * interrupted turn closed by an `error` that says so and then `end` (never a hang): a surviving
 * instance swept the dead owner's expired lease. Then a command sent to another instance is
 * accepted and runs; the session's log is gap-free against Redis; the killed instance is replaced
 * before the next round. How long each stream saw no end after the kill, how long the session
 * was unavailable and what its clients saw is printed (no timing assertion).
 */
import { createClient } from '@redis/client'
import { afterAll, describe, expect, it } from 'vitest'
import { startInstances, type Instances } from '../store/fixtures/instances.ts'
import { follow, gapsAndRepeats, type SeenRecord } from '../store/fixtures/sse-follow.ts'

const ROUNDS = 10

const clusters: Instances[] = []
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()))
})

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** The stored ids of a session's stream, in order. */
async function storedIds(redisUrl: string, id: string): Promise<number[]> {
  const redis = createClient({ url: redisUrl })
  await redis.connect()
  try {
    return ((await redis.xRange(`chimera:s:{${id}}:events`, '-', '+')) ?? []).map((e) => Number(e.id.split('-')[0]))
  } finally {
    redis.destroy()
  }
}

/**
 * Follow a session's plural stream across its turns: each time it ends, open it again after the
 * last id seen, until `until` holds for a record (then close). Resolves with every record.
 */
function followTurns(
  url: () => string,
  until: (r: SeenRecord) => boolean,
  onRecord?: (r: SeenRecord) => void,
): { done: Promise<SeenRecord[]>; close(): void } {
  const all: SeenRecord[] = []
  let current: ReturnType<typeof follow> | undefined
  let stop = false
  const done = (async () => {
    let last: number | undefined
    for (let legs = 0; legs < 20 && !stop; legs++) {
      let hit = false
      current = follow(url, {
        lastEventId: last,
        attempts: 50,
        onRecord: (r) => {
          all.push(r)
          onRecord?.(r)
          if (until(r)) {
            hit = true
            current?.close()
          }
        },
      })
      await current.done
      if (hit) break
      last = [...all].reverse().find((r) => r.id !== undefined)?.id ?? last
    }
    return all
  })()
  return {
    done,
    close() {
      stop = true
      current?.close()
    },
  }
}

describe('three instances, commands anywhere', () => {
  it(
    `the owner SIGKILLed mid-turn, ${ROUNDS} times: an end on every stream, the next command runs elsewhere`,
    { timeout: 400_000 },
    async () => {
      const cluster = await startInstances(3)
      clusters.push(cluster)
      const live = [...cluster.instances]
      const report: string[] = []
      /** Per stream: milliseconds from the kill to the terminal event it received. */
      const noEnd: number[] = []
      const problems: string[] = []
      for (let round = 0; round < ROUNDS; round++) {
        const slot = round % 3
        const owner = live[slot]!
        const others = live.filter((_, k) => k !== slot)
        const res = await post(`${owner.url}/sessions`, { prompt: `!say started ${round}\n!sleep 60000` })
        expect(res.status).toBe(201)
        const id = ((await res.json()) as { session_id: string }).session_id
        const t = { killed: 0 }
        // One stream per instance; the dead owner's client reconnects to the next live instance.
        const streams = live.map((inst, k) => {
          let started!: () => void
          const running = new Promise<void>((r) => (started = r))
          const terminalAt: number[] = []
          const f = follow(
            () => (live[k] === owner && t.killed ? others[0]!.url : inst.url) + `/sessions/${id}/events`,
            {
              attempts: 100,
              onRecord: (r) => {
                if (r.data.includes(`started ${round}`)) started()
                if (r.event === 'error' || r.event === 'cancelled' || r.event === 'agent_result') terminalAt.push(r.at)
              },
            },
          )
          return { on: inst.name, f, running, terminalAt }
        })
        await Promise.all(streams.map((s) => s.running))
        t.killed = performance.now()
        await owner.kill()
        // No command: the sweep ends every stream (a stream still open after 60 s is closed and reported).
        const hang = setTimeout(() => streams.forEach((s) => s.f.close()), 60_000)
        const seen = await Promise.all(streams.map((s) => s.f.done))
        clearTimeout(hang)
        const sent = performance.now()
        // The next command, via another instance, retried as a client would until it is accepted.
        const statuses = new Map<number | string, number>()
        let accepted = 0
        for (let tries = 0; tries < 400 && !accepted; tries++) {
          const r = await post(`${others[tries % 2]!.url}/sessions/${id}/turns`, {
            prompt: `!say resumed ${round}`,
          }).catch((e: Error) => ({ status: e.message, body: null }) as const)
          const status = typeof r.status === 'number' ? r.status : String(r.status)
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
          if (r instanceof Response) await r.body?.cancel()
          if (status === 202) accepted = performance.now()
          else await new Promise((ok) => setTimeout(ok, 50))
        }
        const replacement = cluster.add()
        // The whole log, read after the new turn finished, from the other survivor.
        const log = followTurns(
          () => `${others[1]!.url}/sessions/${id}/events`,
          (r) => r.event === 'agent_result' && r.data.includes(`resumed ${round}`),
        )
        const timer = setTimeout(() => log.close(), 60_000)
        const all = (await log.done).filter((r) => r.id !== undefined)
        clearTimeout(timer)
        live[slot] = await replacement
        const where = `round ${round} (${id}, owner ${owner.name})`
        if (!accepted) problems.push(`${where}: no command accepted after the kill (${JSON.stringify([...statuses])})`)
        // The instance that claims the session closes the open turn with an error saying it was interrupted.
        const closing = all.find(
          (r) =>
            r.event === 'error' &&
            /^the turn was interrupted/.test(
              (JSON.parse(r.data) as { metadata: { message?: string } }).metadata.message ?? '',
            ),
        )
        if (!closing)
          problems.push(
            `${where}: no terminal event closing the interrupted turn: ${all
              .filter((r) => r.event === 'error')
              .map((r) => r.data)
              .join(' | ')}`,
          )
        if (!all.some((r) => r.event === 'agent_result' && r.data.includes(`resumed ${round}`)))
          problems.push(`${where}: the command after the kill did not run`)
        for (const p of gapsAndRepeats(all)) problems.push(`${where}: full log: ${p}`)
        const stored = await storedIds(cluster.redis.url, id)
        if (JSON.stringify(all.map((r) => r.id)) !== JSON.stringify(stored))
          problems.push(`${where}: the log read has ids ${all.map((r) => r.id).join(',')}, Redis ${stored.join(',')}`)
        const saw = seen.map((s, k) => {
          const st = streams[k]!
          if (!s.ended) problems.push(`${where}: the stream on ${st.on} did not end`)
          for (const p of gapsAndRepeats(s.records)) problems.push(`${where}: stream on ${st.on}: ${p}`)
          const terminal = s.records.find((r) => r.id !== undefined && (r.event === 'error' || r.event === 'cancelled'))
          if (!terminal) problems.push(`${where}: the stream on ${st.on} saw no terminal event`)
          const after = st.terminalAt[0] === undefined ? NaN : st.terminalAt[0] - t.killed
          if (!Number.isNaN(after)) noEnd.push(after)
          return `${st.on}${st.on === owner.name ? ' (killed)' : ''}: ${s.connections.length} connection(s), ${terminal?.event ?? 'no terminal'} after ${after.toFixed(0)} ms, ${s.ended ? 'end' : 'no end'}`
        })
        report.push(
          `round ${round + 1}: owner ${owner.name} killed; command sent once the streams ended, accepted after ${(accepted - sent).toFixed(0)} ms (${[...statuses].map(([s, n]) => `${n}x ${s}`).join(', ')}); streams: ${saw.join('; ')}; closing event: ${closing ? JSON.stringify((JSON.parse(closing.data) as { metadata: unknown }).metadata) : 'none'}`,
        )
      }
      const sorted = [...noEnd].sort((a, b) => a - b)
      const pick = (q: number): string =>
        (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN).toFixed(0)
      console.log(
        `owner SIGKILLed mid-turn x${ROUNDS} (no command until every stream ended; lease TTL 5 s, sweep every 1 s):\n${report.join('\n')}\nkill -> terminal event on a stream (${sorted.length} streams): min ${pick(0)} ms, median ${pick(0.5)} ms, max ${pick(1)} ms`,
      )
      expect(problems).toEqual([])
    },
  )
})
