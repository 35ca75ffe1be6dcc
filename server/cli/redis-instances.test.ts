/**
 * Three `chimera otter serve --store redis://…` instances over one private Redis
 * (docs/scale-out.md): any instance serves any session. A session created on A is streamed from
 * B, sent a turn via C, its permission request answered via B and its turn cancelled via A, each
 * answered as if local (the command runs on the instance holding the session's lease, forwarded
 * through Redis). The owner SIGKILLed mid-turn: the next command, sent elsewhere, waits out the
 * lease (at most its TTL); the interrupted turn is closed with an `error` that says so (seen on
 * an SSE stream of a third instance) by whichever claims the session first, that command or a
 * survivor's sweep of the expired lease (scale-sweep.test.ts); then the command runs. Redis killed and restarted
 * mid-stream: writes meanwhile are 503 with Retry-After, no acknowledged event is lost, the
 * open stream goes on without a gap and a resume on another instance matches it.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@redis/client'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { TAKEN_OVER } from '../core/manager.ts'
import { startInstances, type Instances } from '../store/fixtures/instances.ts'

const clusters: Instances[] = []
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.stop()
})

async function cluster(n: number, opts: Parameters<typeof startInstances>[1] = {}): Promise<Instances> {
  const c = await startInstances(n, opts)
  clusters.push(c)
  return c
}

interface Rec {
  id?: number
  event: string
  data: { type?: string; metadata?: Record<string, unknown> } & Record<string, unknown>
}

/** An SSE stream read as it comes: `until` resolves at the first record that passes; `done` at the stream's end. */
function follow(url: string, headers: Record<string, string> = {}) {
  const records: Rec[] = []
  const waiters: { test: (r: Rec) => boolean; resolve: (r: Rec) => void }[] = []
  const ctl = new AbortController()
  const done = (async () => {
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctl.signal })
    expect(res.status).toBe(200)
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buf = ''
    for (;;) {
      const { value, done: end } = await reader.read()
      if (end) break
      buf += value
      let i: number
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i)
        buf = buf.slice(i + 2)
        const id = /^id: (\d+)$/m.exec(block)?.[1]
        const event = /^event: (.+)$/m.exec(block)?.[1]
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (event === undefined) continue
        const rec: Rec = { ...(id ? { id: Number(id) } : {}), event, data: data ? JSON.parse(data) : {} }
        records.push(rec)
        for (const w of waiters.splice(0)) {
          if (w.test(rec)) w.resolve(rec)
          else waiters.push(w)
        }
      }
    }
    return records
  })()
  done.catch(() => {})
  return {
    records,
    done,
    close: () => ctl.abort(),
    until(test: (r: Rec) => boolean): Promise<Rec> {
      const hit = records.find(test)
      if (hit) return Promise.resolve(hit)
      return new Promise((resolve, reject) => {
        waiters.push({ test, resolve })
        done.then(
          () =>
            reject(
              new Error(`stream ended without the record; got ${records.map((r) => `${r.id}:${r.event}`).join(',')}`),
            ),
          reject,
        )
      })
    },
  }
}

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function streamIds(redisUrl: string, id: string): Promise<string[]> {
  const client = createClient({ url: redisUrl })
  await client.connect()
  try {
    return ((await client.xRange(`chimera:s:{${id}}:events`, '-', '+')) ?? []).map((e) => e.id)
  } finally {
    client.destroy()
  }
}

describe('three instances over one Redis', () => {
  it('create on A, stream from B, send via C, approve via B, cancel via A: answered as if local', async () => {
    const c = await cluster(3, { args: ['--approval', 'ask'] })
    const [a, b, cc] = c.instances as [(typeof c.instances)[0], (typeof c.instances)[0], (typeof c.instances)[0]]
    const created = await post(`${a.url}/sessions`, { prompt: '!say hello from A' })
    expect(created.status).toBe(201)
    const { session_id: id } = (await created.json()) as { session_id: string }
    const first = follow(`${b.url}/sessions/${id}/events`)
    const firstRecords = await first.done
    expect(firstRecords.at(-1)!.event).toBe('end')
    expect(firstRecords.some((r) => r.event === 'agent_result')).toBe(true)
    const seen = firstRecords.at(-2)!.id!

    // Send via C; the turn asks for permission; answered via B (forwarded to the owner).
    const live = follow(`${b.url}/sessions/${id}/events`, { 'last-event-id': String(seen) })
    const sent = await post(`${cc.url}/sessions/${id}/turns`, { prompt: '!call Bash {"command":"echo approved-run"}' })
    expect(sent.status).toBe(202)
    expect(await sent.json()).toEqual({ session_id: id, status: 'running' })
    const ask = await live.until((r) => r.event === 'permission_request')
    const requestId = ask.data.metadata!.request_id as string
    const wrong = await post(`${b.url}/tool/approve`, {
      session_id: id,
      request_id: 'no-such-request',
      decision: 'allow',
    })
    expect(wrong.status).toBe(404)
    expect(await wrong.json()).toMatchObject({ error: 'request_not_found' })
    const approved = await post(`${b.url}/tool/approve`, { session_id: id, request_id: requestId, decision: 'allow' })
    expect(approved.status).toBe(200)
    expect(await approved.json()).toEqual({ ok: true })
    const result = await live.until((r) => r.event === 'agent_result')
    expect(result.data.metadata!.success).toBe(true)
    const toolResult = live.records.find((r) => r.event === 'tool_result')
    expect(String(toolResult!.data.metadata!.output)).toContain('approved-run')
    await live.done

    // A long turn sent via B, cancelled via A.
    const tail = live.records.filter((r) => r.id !== undefined).at(-1)!.id!
    const third = follow(`${cc.url}/sessions/${id}/events`, { 'last-event-id': String(tail) })
    expect((await post(`${b.url}/sessions/${id}/turns`, { prompt: '!sleep 60000' })).status).toBe(202)
    await third.until((r) => r.event === 'step_start')
    const cancelled = await post(`${a.url}/sessions/${id}/cancel`, {})
    expect(cancelled.status).toBe(204)
    await third.until((r) => r.event === 'cancelled')
    await third.done

    // Unknown sessions are 404 everywhere, as on one server.
    const unknown = await post(`${cc.url}/sessions/otter-00000000000000000000000000/turns`, { prompt: 'x' })
    expect(unknown.status).toBe(404)

    // One log: the stream's ids are 1..n, and every instance replays the same records.
    const ids = await streamIds(c.redis.url, id)
    expect(ids).toEqual(ids.map((_, i) => `${i + 1}-0`))
    const replays = await Promise.all(c.instances.map((i) => follow(`${i.url}/sessions/${id}/events`).done))
    const shape = (rs: Rec[]) => rs.map((r) => `${r.id ?? ''}:${r.event}`)
    expect(shape(replays[1]!)).toEqual(shape(replays[0]!))
    expect(shape(replays[2]!)).toEqual(shape(replays[0]!))
    expect(replays[0]!.filter((r) => r.id !== undefined).map((r) => `${r.id}-0`)).toEqual(ids)
  })
  it('the owner SIGKILLed mid-turn: the next command (elsewhere) claims the session once the lease ran out, closes the turn, then runs', async () => {
    const c = await cluster(3)
    const [a, b, cc] = c.instances as [(typeof c.instances)[0], (typeof c.instances)[0], (typeof c.instances)[0]]
    const created = await post(`${a.url}/sessions`, { prompt: '!sleep 600000' })
    expect(created.status).toBe(201)
    const { session_id: id } = (await created.json()) as { session_id: string }
    const watching = follow(`${b.url}/sessions/${id}/events`)
    await watching.until((r) => r.event === 'step_start')
    await a.kill()
    const killedAt = Date.now()
    // Sent via C: waits while A's lease lives (A never answers), then C claims and runs it.
    const sent = await post(`${cc.url}/sessions/${id}/turns`, { prompt: '!say after the failover' })
    const unavailableMs = Date.now() - killedAt
    expect(sent.status).toBe(202)
    // B's stream (open since before the kill) sees the interrupted turn end, then its own end.
    const closed = await watching.until((r) => r.event === 'error')
    expect(closed.data.metadata).toMatchObject({ message: TAKEN_OVER, source: 'internal' })
    const watched = await watching.done
    expect(watched.at(-1)!.event).toBe('end')
    expect(watched.at(-1)!.data).toMatchObject({ session_id: id, success: false })
    const last = watched.filter((r) => r.id !== undefined).at(-1)!.id!
    // The new turn ran after it, on C.
    const after = await follow(`${b.url}/sessions/${id}/events`, { 'last-event-id': String(last) }).done
    expect(after.map((r) => r.event)).toContain('agent_result')
    const result = after.find((r) => r.event === 'agent_result')!
    expect(result.data.metadata).toMatchObject({ success: true, output: 'after the failover' })
    const ids = await streamIds(c.redis.url, id)
    expect(ids).toEqual(ids.map((_, i) => `${i + 1}-0`))
    // The bound: the lease's TTL (5 s) after the kill, plus the routing's polling.
    console.log(`failover: session ${id} unavailable for ${unavailableMs} ms after SIGKILL of its owner`)
  })

  it('Redis killed and restarted mid-stream: writes are 503 meanwhile, nothing acknowledged is lost, streams go on without a gap', async () => {
    const c = await cluster(3)
    const [a, b, cc] = c.instances as [(typeof c.instances)[0], (typeof c.instances)[0], (typeof c.instances)[0]]
    const created = await post(`${a.url}/sessions`, { prompt: '!say before the restart' })
    const { session_id: id } = (await created.json()) as { session_id: string }
    await follow(`${a.url}/sessions/${id}/events`).done
    const before = await streamIds(c.redis.url, id)
    // A turn that is running while Redis goes away and comes back.
    expect(
      (await post(`${b.url}/sessions/${id}/turns`, { prompt: '!sleep 2500\n!say across the restart' })).status,
    ).toBe(202)
    const open = follow(`${cc.url}/sessions/${id}/events`, { 'last-event-id': String(before.length) })
    await open.until((r) => r.event === 'step_start')
    await c.redis.kill()
    const downAt = Date.now()
    const refused = await post(`${a.url}/sessions/${id}/turns`, { prompt: 'while Redis is down' })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await refused.json()).toMatchObject({ error: 'service_unavailable' })
    await c.redis.start()
    const downMs = Date.now() - downAt
    const records = await open.done
    const ids = records.filter((r) => r.id !== undefined).map((r) => r.id!)
    expect(ids).toEqual(ids.map((_, i) => before.length + 1 + i))
    const result = records.find((r) => r.event === 'agent_result')
    expect(result?.data.metadata).toMatchObject({ success: true, output: 'across the restart' })
    const after = await streamIds(c.redis.url, id)
    expect(after.slice(0, before.length)).toEqual(before)
    expect(after).toEqual(after.map((_, i) => `${i + 1}-0`))
    // A client resuming on another instance gets the same records.
    const resumed = await follow(`${a.url}/sessions/${id}/events`, { 'last-event-id': String(before.length) }).done
    expect(resumed.map((r) => `${r.id ?? ''}:${r.event}`)).toEqual(records.map((r) => `${r.id ?? ''}:${r.event}`))
    console.log(
      `redis restart: down ${downMs} ms mid-turn; the open stream got ids ${ids[0]}..${ids.at(-1)} (${ids.length}, no gap) then end; log ${before.length} -> ${after.length} events`,
    )
  })
  it('`otter sessions list|show` and `mink runs` read the Redis store CHIMERA_STORE names', async () => {
    const c = await cluster(1)
    const created = await post(`${c.instances[0]!.url}/sessions`, { prompt: '!say listed from Redis' })
    const { session_id: id } = (await created.json()) as { session_id: string }
    await follow(`${c.instances[0]!.url}/sessions/${id}/events`).done
    const home = mkdtempSync(join(tmpdir(), 'chimera-cli-home-'))
    try {
      const cli = (...args: string[]) =>
        spawnSync(process.execPath, [CLI_BUNDLE, ...args], {
          encoding: 'utf8',
          env: { ...process.env, CHIMERA_HOME: home, CHIMERA_STORE: c.redis.url },
          timeout: 30_000,
        })
      const list = cli('otter', 'sessions', 'list', '--json')
      expect(list.status, list.stderr).toBe(0)
      expect(
        (JSON.parse(list.stdout) as { sessions: { session_id: string }[] }).sessions.map((x) => x.session_id),
      ).toEqual([id])
      const show = cli('otter', 'sessions', 'show', id, '--json')
      expect(show.status, show.stderr).toBe(0)
      expect(show.stdout).toContain('listed from Redis')
      const runs = cli('mink', 'runs', '--json')
      expect(runs.status, runs.stderr).toBe(0)
      expect((JSON.parse(runs.stdout) as { runs: { run_id: string }[] }).runs.map((r) => r.run_id)).toEqual([id])
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })
})
