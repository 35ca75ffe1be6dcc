/**
 * One writer per session across processes on one CHIMERA_HOME (docs/core.md "One writer per
 * session", docs/decisions/0431-one-writer-per-session.md), with two real `otter serve`
 * processes: while the first runs a turn in a session, the second lists it, reads it and replays
 * its events without moving or changing any file of the session directory; its prompt and its
 * delete are refused `409 session_busy` naming the first process; once the first is SIGKILLed
 * the second takes the session over and writes, and every event the first acknowledged is there.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { AnyEvent } from '../events/event-types.ts'

const temp = tempDirs()
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})
afterAll(() => temp.cleanup())

interface Served {
  url: string
  child: ChildProcess
  exit: Promise<unknown>
}

async function serve(home: string, cwd: string): Promise<Served> {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--port', '0', '--cwd', cwd], {
    env: { ...process.env, CHIMERA_HOME: home, CHIMERA_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  children.push(child)
  let err = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exit = new Promise((r) => child.on('exit', r))
  const deadline = Date.now() + 15_000
  for (;;) {
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)
    if (m) return { url: m[1]!, child, exit }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start: ${err}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function events(url: string, id: string): Promise<AnyEvent[]> {
  const r = await fetch(`${url}/sessions/${id}`)
  expect(r.status).toBe(200)
  return ((await r.json()) as { events: AnyEvent[] }).events
}

async function waitFor<T>(get: () => Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await get()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Every file under `dir` (names, sizes and SHA-256): what a reader must leave as it is. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string, rel: string): void => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n)
      if (statSync(p).isDirectory()) walk(p, `${rel}${n}/`)
      else out[`${rel}${n}`] = createHash('sha256').update(readFileSync(p)).digest('hex')
    }
  }
  walk(dir, '')
  return out
}

/** The SSE replay of a session from its start: the ids of its records, read until `last` arrives. */
async function replay(url: string, id: string, last: number): Promise<number[]> {
  const ctl = new AbortController()
  const r = await fetch(`${url}/sessions/${id}/events`, { signal: ctl.signal })
  expect(r.status).toBe(200)
  const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  const ids = (): number[] => [...text.matchAll(/^id: ?(\d+)$/gm)].map((m) => Number(m[1]))
  const deadline = Date.now() + 15_000
  while (!ids().includes(last)) {
    if (Date.now() > deadline) throw new Error(`replay stopped short: ${text.slice(-400)}`)
    const { value, done } = await reader.read()
    if (done) break
    text += value
  }
  ctl.abort()
  return ids()
}

describe('two processes on one CHIMERA_HOME', () => {
  it('the second reads and replays the first one’s live session without touching it, is refused its writes, and takes over after SIGKILL', async () => {
    const home = temp.make('one-writer-home-')
    const cwd = temp.make('one-writer-ws-')
    const a = await serve(home, cwd)
    const created = await post(`${a.url}/session`, {})
    const { session_id: id } = (await created.json()) as { session_id: string }
    expect((await post(`${a.url}/session/${id}/message`, { message: '!say first turn' })).status).toBe(202)
    await waitFor(
      async () => ((await events(a.url, id)).some((e) => e.type === 'agent_result') ? true : undefined),
      'the first turn to end',
    )
    // A turn that stays open: the first process is in the middle of writing this session.
    expect((await post(`${a.url}/session/${id}/message`, { message: '!sleep 60000\n!say never' })).status).toBe(202)
    const acknowledged = await waitFor(async () => {
      const evs = await events(a.url, id)
      return evs.filter((e) => e.type === 'turn_start').length === 2 && evs.at(-1)?.type !== 'turn_start'
        ? evs
        : undefined
    }, 'the second turn to start')
    const dir = join(home, 'eventlog', id)
    const before = snapshot(dir)
    expect(Object.keys(before)).toContain('owner.json')

    const b = await serve(home, cwd)
    const listed = (await (await fetch(`${b.url}/sessions`)).json()) as { sessions: { session_id: string }[] }
    expect(listed.sessions.map((s) => s.session_id)).toContain(id)
    const read = await events(b.url, id)
    expect(read).toEqual(acknowledged)
    const last = acknowledged.at(-1)!.seq
    expect(await replay(b.url, id, last)).toEqual(acknowledged.map((e) => e.seq))

    const refused = await post(`${b.url}/session/${id}/message`, { message: '!say from b' })
    expect(refused.status).toBe(409)
    const body = (await refused.json()) as { error: string; message: string }
    expect(body.error).toBe('session_busy')
    expect(body.message).toContain(
      `session ${id} is open in another chimera process (PID ${a.child.pid}, chimera otter, since`,
    )
    const plural = await post(`${b.url}/sessions/${id}/turns`, { prompt: '!say from b' })
    expect(plural.status).toBe(409)
    const del = await fetch(`${b.url}/session/${id}`, { method: 'DELETE' })
    expect(del.status).toBe(409)
    expect(((await del.json()) as { error: string }).error).toBe('session_busy')
    // Nothing in the session directory moved or changed.
    expect(snapshot(dir)).toEqual(before)
    expect(await events(a.url, id)).toEqual(acknowledged)

    a.child.kill('SIGKILL')
    await a.exit
    const taken = await post(`${b.url}/session/${id}/message`, { message: '!say after the takeover' })
    expect(taken.status, await taken.clone().text()).toBe(202)
    const after = await waitFor(async () => {
      const evs = await events(b.url, id)
      return evs.some((e) => e.type === 'agent_result' && e.data.output === 'after the takeover') ? evs : undefined
    }, 'the takeover turn to end')
    // Every event the first process acknowledged is still there, in place.
    expect(after.slice(0, acknowledged.length)).toEqual(acknowledged)
    // The turn it left open was closed as interrupted before the new one.
    expect(after.slice(acknowledged.length).map((e) => e.type)).toContain('turn_end')
    expect(JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8'))).toMatchObject({ pid: b.child.pid })
  })
})
