/**
 * The lease sweep and forwarded commands whose owner fails, over real instances and a private
 * Redis (docs/scale-out.md "What each failure does", docs/decisions/0375-lease-sweep.md):
 *
 * - the owner SIGKILLed mid-turn and no command sent: the surviving instances race to sweep its
 *   expired leases, each interrupted turn is closed exactly once (one `error` saying so) and every
 *   stream, on every survivor, ends — the time from the kill to the terminal event is printed;
 * - a live owner whose process is stopped (SIGSTOP: its event loop stalls) for less than the
 *   lease's TTL minus a renewal period keeps its session (its turn goes on to the end, nothing
 *   swept); stopped longer, it is swept like a dead one, and once it runs again its writes are
 *   refused (the log holds one end of the turn, and the next turn follows it);
 * - a forwarded command the owner took and never answered because it died: `503` with
 *   `Retry-After` saying it may or may not have taken effect; an answer it sent before dying is
 *   returned as is; an owner that holds the lease but does not answer within
 *   `CHIMERA_FORWARD_TIMEOUT_MS`: `503` saying whether it had taken the command (it may have run)
 *   or not (withdrawn: it did not run).
 *
 * The owner that takes a request and dies is played at the Redis level: the owner is SIGKILLed
 * first, and the test pops the request from its inbox (what a dying owner's reader does), so
 * what is taken and when is exact. No timing assertion: durations are printed.
 */
import { createClient } from '@redis/client'
import { afterEach, describe, expect, it } from 'vitest'
import { TAKEN_OVER } from '../core/manager.ts'
import { startInstances, type Instance, type Instances } from '../store/fixtures/instances.ts'
import { follow, gapsAndRepeats, type Follower, type SeenRecord } from '../store/fixtures/sse-follow.ts'

const clusters: Instances[] = []
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  for (const c of clusters.splice(0)) await c.stop()
})

async function cluster(n: number, opts: Parameters<typeof startInstances>[1] = {}): Promise<Instances> {
  const c = await startInstances(n, opts)
  clusters.push(c)
  return c
}

async function redisClient(url: string) {
  const client = createClient({ url })
  await client.connect()
  cleanups.push(() => client.destroy())
  return client
}

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function createOn(inst: Instance, prompt: string): Promise<string> {
  const res = await post(`${inst.url}/sessions`, { prompt })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

const messageOf = (r: SeenRecord): string =>
  (JSON.parse(r.data) as { metadata?: { message?: string } }).metadata?.message ?? ''

/** A stream with a gate: `when(test)` resolves at the first record that passes. */
function watch(url: string): Follower & { when(test: (r: SeenRecord) => boolean): Promise<SeenRecord> } {
  const waiters: { test: (r: SeenRecord) => boolean; resolve: (r: SeenRecord) => void }[] = []
  const f = follow(url, {
    onRecord: (r) => {
      for (const w of waiters.splice(0)) {
        if (w.test(r)) w.resolve(r)
        else waiters.push(w)
      }
    },
  })
  cleanups.push(() => f.close())
  return Object.assign(f, {
    when(test: (r: SeenRecord) => boolean): Promise<SeenRecord> {
      const hit = f.records.find(test)
      if (hit) return Promise.resolve(hit)
      return new Promise<SeenRecord>((resolve, reject) => {
        waiters.push({ test, resolve })
        void f.done.then(() =>
          reject(new Error(`stream ended without it: ${f.records.map((r) => `${r.id ?? ''}:${r.event}`).join(',')}`)),
        )
      })
    },
  })
}

/** The stored events of a session, parsed. */
async function storedEvents(
  redis: Awaited<ReturnType<typeof redisClient>>,
  id: string,
): Promise<{ seq: number; type: string; data: Record<string, unknown> }[]> {
  return ((await redis.xRange(`chimera:s:{${id}}:events`, '-', '+')) ?? []).map(
    (e) => JSON.parse(String(e.message.e)) as { seq: number; type: string; data: Record<string, unknown> },
  )
}

/** The interrupted-turn closings (`error` saying so) in a stored log. */
const closings = <E extends { type: string; data: Record<string, unknown> }>(events: E[]): E[] =>
  events.filter((e) => e.type === 'error' && e.data.message === TAKEN_OVER)

/** Poll `check` (an outside clock: a process's log, Redis) every 25 ms until it holds, at most `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not reached within ${ms} ms: ${what}`)
    await new Promise((ok) => setTimeout(ok, 25))
  }
}

const stats = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b)
  return `min ${s[0]!.toFixed(0)} ms, median ${s[Math.floor(s.length / 2)]!.toFixed(0)} ms, max ${s.at(-1)!.toFixed(0)} ms`
}

describe('the lease sweep', () => {
  it('the owner SIGKILLed mid-turn, no command sent: three sweepers race, each turn is closed once, every stream ends', async () => {
    const c = await cluster(4)
    const [owner, ...survivors] = c.instances as [Instance, ...Instance[]]
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push(await createOn(owner, `!say running ${i}\n!sleep 600000`))
    const streams = ids.flatMap((id) =>
      survivors.map((s) => ({ id, on: s.name, f: watch(`${s.url}/sessions/${id}/events`) })),
    )
    await Promise.all(streams.map((s, k) => s.f.when((r) => r.data.includes(`running ${Math.floor(k / 3)}`))))
    const killedAt = performance.now()
    await owner.kill()
    const seen = await Promise.all(streams.map((s) => s.f.done))
    const redis = await redisClient(c.redis.url)
    const after: number[] = []
    for (const [k, s] of streams.entries()) {
      const got = seen[k]!
      expect(got.ended, `${s.on} ${s.id}`).toBe(true)
      expect(got.connections).toHaveLength(1)
      expect(gapsAndRepeats(got.records)).toEqual([])
      const terminal = got.records.find((r) => r.event === 'error')!
      expect(messageOf(terminal)).toBe(TAKEN_OVER)
      expect(got.records.at(-1)!.event).toBe('end')
      after.push(terminal.at - killedAt)
    }
    for (const id of ids) {
      const events = await storedEvents(redis, id)
      expect(closings(events)).toHaveLength(1)
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
      expect(events.at(-1)!.type).toBe('error')
    }
    // Who swept what (each instance logs the sessions it took over).
    const by = survivors.map(
      (s) => `${s.name} ${ids.filter((id) => s.stderr().includes(`session ${id}: its owner's lease ran out`)).length}`,
    )
    const total = survivors.reduce(
      (n, s) => n + ids.filter((id) => s.stderr().includes(`session ${id}: its owner's lease ran out`)).length,
      0,
    )
    expect(total).toBe(ids.length)
    console.log(
      `sweep after SIGKILL (no command sent; lease TTL 5 s, sweep every 1 s: bound 6 s): ${ids.length} sessions, ${streams.length} streams on 3 instances; kill -> terminal event on a stream: ${stats(after)}; swept by ${by.join(', ')}`,
    )
  })

  it('a stalled owner keeps its session below TTL minus a renewal period; stalled past the TTL it is swept and fenced', async () => {
    const c = await cluster(3)
    const [owner, b, cc] = c.instances as [Instance, Instance, Instance]
    const redis = await redisClient(c.redis.url)
    const stopped = (on: boolean) => process.kill(owner.pid, on ? 'SIGSTOP' : 'SIGCONT')
    cleanups.push(() => {
      if (owner.alive()) stopped(false)
    })

    // Stopped 2.5 s (the TTL is 5 s, renewed every 1.5 s: a stall up to 3.5 s cannot lose it).
    const held = await createOn(owner, '!sleep 3000\n!say survived the stall')
    const heldStream = watch(`${b.url}/sessions/${held}/events`)
    await heldStream.when((r) => r.event === 'step_start')
    stopped(true)
    await new Promise((ok) => setTimeout(ok, 2_500))
    stopped(false)
    const heldSeen = await heldStream.done
    const result = heldSeen.records.find((r) => r.event === 'agent_result')
    expect(result, heldSeen.records.map((r) => r.event).join(',')).toBeDefined()
    expect(result!.data).toContain('survived the stall')
    expect(closings(await storedEvents(redis, held))).toEqual([])
    expect(owner.stderr()).not.toContain(`session ${held}: lease lost`)
    for (const s of [b, cc]) expect(s.stderr()).not.toContain(`session ${held}: its owner's lease ran out`)

    // Stopped until another instance swept it (past the TTL): the turn is closed elsewhere.
    const swept = await createOn(owner, '!sleep 600000')
    const sweptStream = watch(`${b.url}/sessions/${swept}/events`)
    await sweptStream.when((r) => r.event === 'step_start')
    const stoppedAt = performance.now()
    stopped(true)
    const closing = await sweptStream.when((r) => r.event === 'error')
    expect(messageOf(closing)).toBe(TAKEN_OVER)
    const sweptAfter = closing.at - stoppedAt
    expect((await sweptStream.done).ended).toBe(true)
    stopped(false)
    // Running again, the old owner finds its lease gone and stops its copy; its writes are refused.
    await eventually(() => owner.stderr().includes(`session ${swept}: lease lost`), 'the old owner notices')
    await eventually(
      () => owner.stderr().includes(`no longer holds the lease of session ${swept}`),
      "the old owner's write is refused",
    )
    const next = await post(`${owner.url}/sessions/${swept}/turns`, { prompt: '!say after the stall' })
    expect(next.status).toBe(202)
    await eventually(
      async () => (await storedEvents(redis, swept)).some((e) => e.type === 'agent_result'),
      'the next turn ran',
    )
    const events = await storedEvents(redis, swept)
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    expect(closings(events)).toHaveLength(1)
    // The first turn has one end (the sweep's); nothing of the old owner's follows it.
    const ends = events.filter((e) => e.type === 'turn_end').map((e) => e.seq)
    const closedAt = closings(events)[0]!.seq
    expect(ends.filter((s) => s < closedAt)).toHaveLength(1)
    expect(events.filter((e) => e.type === 'cancelled')).toEqual([])
    expect(events[closedAt]!.type).toBe('user_message')
    console.log(
      `stalled owner: a 2.5 s stop kept the session (turn ended by itself); a stop past the TTL was swept after ${sweptAfter.toFixed(0)} ms, the old owner then fenced (log gap-free, one end of the turn)`,
    )
  })
})

describe('forwarded commands whose owner fails', () => {
  /** The next forwarded request waiting in `instanceId`'s inbox, taken as its owner's reader takes it. */
  async function take(redis: Awaited<ReturnType<typeof redisClient>>, instanceId: string) {
    const got = await redis.blPop(`chimera:i:{${instanceId}}:inbox`, 20)
    expect(got).not.toBeNull()
    // The request travels in the session router's envelope (kind `http`).
    const m = JSON.parse(got!.element) as {
      id: string
      from: string
      payload: { body: { method: string; url: string } }
    }
    return { id: m.id, from: m.from, payload: m.payload.body }
  }

  it('the owner took the command and died: 503 saying it may or may not have taken effect; an answer it sent first is returned', async () => {
    const c = await cluster(3)
    const [owner, b, cc] = c.instances as [Instance, Instance, Instance]
    const redis = await redisClient(c.redis.url)
    const lost = await createOn(owner, '!sleep 600000')
    const answered = await createOn(owner, '!sleep 600000')
    const stream = watch(`${cc.url}/sessions/${lost}/events`)
    await stream.when((r) => r.event === 'step_start')
    const ownerId = (await redis.get(`chimera:s:{${lost}}:owner`))!
    await owner.kill()
    const killedAt = performance.now()

    // Two commands forwarded to the dead owner (its lease lives on for a while): both taken from
    // its inbox, as its reader would have; one never answered, the other answered before it died.
    const pending = post(`${b.url}/sessions/${lost}/cancel`, {})
    const second = post(`${cc.url}/sessions/${answered}/cancel`, {})
    const taken = [await take(redis, ownerId), await take(redis, ownerId)]
    expect(taken.map((t) => t.payload.url).sort()).toEqual(
      [`/sessions/${lost}/cancel`, `/sessions/${answered}/cancel`].sort(),
    )
    const req2 = taken.find((t) => t.payload.url.includes(answered))!
    const reply = { status: 204, headers: [['x-answered-by', 'the owner']], body: '' }
    await redis.rPush(
      `chimera:i:{${req2.from}}:replies`,
      JSON.stringify({ t: 'rep', id: req2.id, from: ownerId, payload: reply }),
    )
    const res2 = await second
    expect(res2.status).toBe(204)
    expect(res2.headers.get('x-answered-by')).toBe('the owner')

    const res = await pending
    const unanswered = performance.now() - killedAt
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
    const body = (await res.json()) as { error: string; message: string }
    expect(body.error).toBe('service_unavailable')
    expect(body.message).toMatch(/stopped while handling this request \(it may or may not have taken effect\); retry$/)
    // Nobody ran it; the sweep closes the turn the dead owner left open (no command needed).
    const closing = await stream.when((r) => r.event === 'error')
    expect(messageOf(closing)).toBe(TAKEN_OVER)
    expect((await post(`${b.url}/sessions/${lost}/turns`, { prompt: '!say retried' })).status).toBe(202)
    console.log(
      `forwarded to an owner that took it and died: 503 after ${unanswered.toFixed(0)} ms (${body.message}); an answer sent before dying came back as is (204)`,
    )
  })

  it('an owner that holds the lease and does not answer within CHIMERA_FORWARD_TIMEOUT_MS: 503, saying whether it had taken the command', async () => {
    const c = await cluster(3, { env: { CHIMERA_FORWARD_TIMEOUT_MS: '1000' } })
    const [owner, b, cc] = c.instances as [Instance, Instance, Instance]
    const redis = await redisClient(c.redis.url)
    const id = await createOn(owner, '!sleep 600000')
    const stream = watch(`${b.url}/sessions/${id}/events`)
    await stream.when((r) => r.event === 'step_start')
    const ownerId = (await redis.get(`chimera:s:{${id}}:owner`))!
    await owner.kill()
    // The lease lives on as if its owner were alive and stuck: it renews but answers nothing.
    await redis.set(`chimera:s:{${id}}:owner`, ownerId, { PX: 120_000 })

    const t0 = performance.now()
    const takenRes = post(`${b.url}/sessions/${id}/cancel`, {})
    await take(redis, ownerId)
    const taken = await takenRes
    const takenMs = performance.now() - t0
    expect(taken.status).toBe(503)
    expect(taken.headers.get('retry-after')).toMatch(/^\d+$/)
    const takenBody = (await taken.json()) as { message: string }
    expect(takenBody.message).toMatch(
      /did not answer within 1 s \(it had taken this request: it may or may not have taken effect\)/,
    )

    const t1 = performance.now()
    const untaken = await post(`${cc.url}/sessions/${id}/turns`, { prompt: '!say never' })
    const untakenMs = performance.now() - t1
    expect(untaken.status).toBe(503)
    const untakenBody = (await untaken.json()) as { message: string }
    expect(untakenBody.message).toMatch(
      /did not answer within 1 s \(it had not taken this request, which was withdrawn: it did not take effect\)/,
    )
    // Withdrawn: not left in the owner's inbox to run later.
    expect(await redis.lLen(`chimera:i:{${ownerId}}:inbox`)).toBe(0)
    console.log(
      `forward timeout 1 s: taken and unanswered -> 503 after ${takenMs.toFixed(0)} ms; never taken -> 503 after ${untakenMs.toFixed(0)} ms (withdrawn)`,
    )
  })
})
