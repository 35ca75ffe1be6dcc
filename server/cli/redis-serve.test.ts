/**
 * `chimera otter serve --store redis://…` (docs/scale-out.md) as users run it, against a private
 * redis-server: the session's events are the stream's entries (SSE `id:` = `seq` = stream id),
 * a second server over the same Redis lists the session and replays the same records, a prompt
 * sent while Redis is down is refused with `503` + `Retry-After` (nothing acknowledged) and
 * accepted once it is back; an unreachable Redis at start is one line and exit 1, a bad `--store`
 * a usage error. Nothing is written under CHIMERA_HOME's event log.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@redis/client'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { startRedis, type TestRedis } from '../store/fixtures/redis-server.ts'

const children: ChildProcess[] = []
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r))
      c.kill('SIGTERM')
      await gone
    }
  }
  for (const f of cleanups.splice(0).reverse()) await f()
})

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'chimera-redis-serve-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function redis(): Promise<TestRedis> {
  const r = await startRedis()
  cleanups.push(() => r.stop())
  return r
}

function launch(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', ...args], {
    env: { ...process.env, CHIMERA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  child.stdout.resume()
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return { child, stderr: () => err, exit }
}

/** A server over `store` (flag, or CHIMERA_STORE when `viaEnv`); resolves with its URL once it listens. */
async function serve(store: string, viaEnv = false): Promise<{ url: string; stderr: () => string; home: string }> {
  const h = home()
  const p = launch(
    ['--port', '0', '--approval', 'allow', ...(viaEnv ? [] : ['--store', store])],
    viaEnv ? { CHIMERA_HOME: h, CHIMERA_STORE: store } : { CHIMERA_HOME: h },
  )
  const url = await new Promise<string>((resolve, reject) => {
    const check = (): void => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(p.stderr())
      if (m) resolve(m[1]!)
    }
    p.child.stderr.on('data', check)
    void p.exit.then((code) => reject(new Error(`server exited (${code}): ${p.stderr()}`)))
  })
  return { url, stderr: p.stderr, home: h }
}

/** The SSE records of a stream until `event: end` (ids and event types). */
async function records(url: string): Promise<{ id: number; event: string }[]> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream' } })
  expect(res.status).toBe(200)
  const text = await res.text()
  const out: { id: number; event: string }[] = []
  for (const block of text.split('\n\n')) {
    const id = /^id: (\d+)$/m.exec(block)?.[1]
    const event = /^event: (.+)$/m.exec(block)?.[1]
    if (id !== undefined && event !== undefined) out.push({ id: Number(id), event })
  }
  return out
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0))
    })
  })
}

describe('otter serve --store redis://', () => {
  it('keeps sessions in Redis: SSE ids are the stream ids, another server over the same Redis replays them', async () => {
    const r = await redis()
    const a = await serve(r.url)
    const b = await serve(r.url, true)
    expect(a.stderr()).toContain(`sessions live in the Redis store at ${r.url}`)
    const created = await fetch(`${a.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'hello over redis' }),
    })
    expect(created.status).toBe(201)
    const { session_id } = (await created.json()) as { session_id: string }
    const onA = await records(`${a.url}/sessions/${session_id}/events`)
    expect(onA.map((x) => x.id)).toEqual(onA.map((_, i) => i + 1))
    expect(onA.some((x) => x.event === 'agent_result')).toBe(true)
    const client = createClient({ url: r.url })
    await client.connect()
    const entries = await client.xRange(`chimera:s:{${session_id}}:events`, '-', '+')
    client.destroy()
    expect((entries ?? []).map((e) => e.id)).toEqual(onA.map((x) => `${x.id}-0`))
    const listed = (await (await fetch(`${b.url}/sessions`)).json()) as { sessions: { session_id: string }[] }
    expect(listed.sessions.map((s) => s.session_id)).toContain(session_id)
    expect(await records(`${b.url}/sessions/${session_id}/events`)).toEqual(onA)
    // Nothing of the session went to either home's event log.
    expect(existsSync(join(a.home, 'eventlog', session_id))).toBe(false)
  })

  it('a prompt while Redis is down is 503 with Retry-After, and accepted once Redis is back', async () => {
    const r = await redis()
    const a = await serve(r.url)
    const created = await fetch(`${a.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'first' }),
    })
    const { session_id } = (await created.json()) as { session_id: string }
    await records(`${a.url}/sessions/${session_id}/events`)
    await r.kill()
    const turn = (): Promise<Response> =>
      fetch(`${a.url}/sessions/${session_id}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'second' }),
      })
    const refused = await turn()
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await refused.json()).toMatchObject({ error: 'service_unavailable', message: /Redis store is unavailable/ })
    await r.start()
    // The server reconnects with backoff: retry as a client told Retry-After would (bounded).
    let status = 0
    for (let i = 0; i < 200 && status !== 202; i++) {
      const res = await turn()
      status = res.status
      await res.body?.cancel()
      if (status !== 202) await new Promise((res) => setTimeout(res, 100))
    }
    expect(status).toBe(202)
  })

  it('an unreachable Redis at start is one line and exit 1; a bad --store or forward timeout is a usage error', async () => {
    const port = await closedPort()
    const down = launch(['--port', '0', '--store', `redis://127.0.0.1:${port}/0`], { CHIMERA_HOME: home() })
    expect(await down.exit).toBe(1)
    const lines = down.stderr().trim().split('\n')
    expect(lines.filter((l) => l.includes('cannot reach the Redis store'))).toHaveLength(1)
    expect(down.stderr()).toContain(`redis://127.0.0.1:${port}/0`)
    const bad = launch(['--port', '0', '--store', 'http://127.0.0.1:1/'], { CHIMERA_HOME: home() })
    expect(await bad.exit).toBe(2)
    expect(bad.stderr()).toContain('--store must be "file" or redis://host:port/db')
    const wait = launch(['--port', '0', '--store', `redis://127.0.0.1:${port}/0`], {
      CHIMERA_HOME: home(),
      CHIMERA_FORWARD_TIMEOUT_MS: 'soon',
    })
    expect(await wait.exit).toBe(2)
    expect(wait.stderr()).toContain(
      'CHIMERA_FORWARD_TIMEOUT_MS must be milliseconds between 100 and 600000, got "soon"',
    )
  })
})
