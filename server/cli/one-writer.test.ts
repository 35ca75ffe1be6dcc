/**
 * One writer per session across processes on one CHIMERA_HOME (docs/core.md "One writer per
 * session", docs/decisions/0431-one-writer-per-session.md), with two real `otter serve`
 * processes: while the first runs a turn in a session, the second lists it, reads it and replays
 * its events without moving or changing any file of the session directory; its prompt and its
 * delete are refused `409 session_busy` naming the first process; once the first is SIGKILLed
 * the second takes the session over and writes, and every event the first acknowledged is there.
 * The same refusal on the other wires: a `code --mode rpc --session` of that session gets a
 * failed response naming the holder, another ACP agent loads (replays) it and gets Invalid params
 * with `data.error: "session_busy"` for its prompt.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findOperation } from '../../conformance/harness/sniffer.ts'
import { sniffingFetch } from '../../conformance/harness/sniffing-fetch.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { dirSnapshot } from '../store/fixtures/dir-snapshot.ts'
import { cliProcesses, type Proc } from './fixtures/cli-process.ts'
import { otterServers, post, sessionEvents, waitFor } from './fixtures/otter-http.ts'

const temp = tempDirs()
const { serve } = otterServers()
afterAll(() => temp.cleanup())

const events = sessionEvents
const snapshot = dirSnapshot

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

    // Each refusal is one the contract declares (specs/openapi: `SessionBusy`, 409).
    const sniff = sniffingFetch()
    const send = (method: string, path: string, body?: unknown): Promise<Response> =>
      sniff.fetch(
        new Request(`${b.url}${path}`, {
          method,
          ...(body === undefined
            ? {}
            : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
        }),
      )
    const refused = await send('POST', `/session/${id}/message`, { message: '!say from b' })
    expect(refused.status).toBe(409)
    const body = (await refused.json()) as { error: string; message: string }
    expect(body.error).toBe('session_busy')
    expect(body.message).toContain(
      `session ${id} is open in another chimera process (PID ${a.child.pid}, chimera otter, since`,
    )
    const plural = await send('POST', `/sessions/${id}/turns`, { prompt: '!say from b' })
    expect(plural.status).toBe(409)
    const renamed = await send('PATCH', `/sessions/${id}`, { title: 'from b' })
    expect(renamed.status).toBe(409)
    const del = await send('DELETE', `/session/${id}`)
    expect(del.status).toBe(409)
    expect(((await del.json()) as { error: string }).error).toBe('session_busy')
    expect(sniff.violations()).toEqual([])
    for (const [method, path] of [
      ['POST', `/session/${id}/message`],
      ['POST', `/sessions/${id}/turns`],
      ['PATCH', `/sessions/${id}`],
      ['DELETE', `/session/${id}`],
    ] as const)
      expect(Object.keys(findOperation(method, path)?.responses ?? {}), `${method} ${path}`).toContain('409')
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

describe('a copy read while nobody held the session', () => {
  it('is read again before a prompt on the singular route when another process wrote the session since', async () => {
    const home = temp.make('one-writer-stale-')
    const cwd = temp.make('one-writer-ws-')
    const said = (url: string, id: string, output: string) =>
      waitFor(async () => {
        const evs = await events(url, id)
        return evs.some((e) => e.type === 'agent_result' && e.data.output === output) ? evs : undefined
      }, `the turn saying ${output}`)
    const a = await serve(home, cwd)
    const { session_id: id } = (await (await post(`${a.url}/session`, {})).json()) as { session_id: string }
    expect((await post(`${a.url}/session/${id}/message`, { message: '!say from a' })).status).toBe(202)
    await said(a.url, id, 'from a')
    a.child.kill('SIGTERM')
    await a.exit
    // B follows the session (its stream loads it into B's memory; nobody holds it then).
    const b = await serve(home, cwd)
    const ctl = new AbortController()
    expect((await fetch(`${b.url}/sessions/${id}/events`, { signal: ctl.signal })).status).toBe(200)
    // Another process takes the session, writes a turn and lets it go.
    const c = await serve(home, cwd)
    expect((await post(`${c.url}/sessions/${id}/turns`, { prompt: '!say from c' })).status).toBe(202)
    const written = await said(c.url, id, 'from c')
    c.child.kill('SIGTERM')
    await c.exit
    // B's prompt runs on the session as it is now, after C's turn.
    expect((await post(`${b.url}/session/${id}/message`, { message: '!say from b' })).status).toBe(202)
    const after = await said(b.url, id, 'from b')
    ctl.abort()
    expect(after.slice(0, written.length)).toEqual(written)
    expect(readdirSync(join(home, 'eventlog', id)).filter((n) => n.startsWith('queued-'))).toEqual([])
  })
})

const procs = cliProcesses()

/** A JSON-RPC call over an ACP agent's stdio; its response (result or error). */
/** The session's segment (`events.jsonl`), or '' while there is none. */
function segmentText(dir: string): string {
  try {
    return readFileSync(join(dir, 'events.jsonl'), 'utf8')
  } catch {
    return ''
  }
}

async function call(p: Proc, id: number, method: string, params: unknown): Promise<Record<string, unknown>> {
  p.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
  return p.waitLine((m) => m.id === id && m.method === undefined, 15_000)
}

describe('the refusal on every wire', () => {
  it('ACP holds the session mid-turn: the RPC prompt and another ACP agent’s prompt are refused naming it; the ACP load replays', async () => {
    const home = procs.temp.make('one-writer-wires-')
    const cwd = procs.temp.make('one-writer-ws-')
    const env = { CHIMERA_HOME: home }
    const a = procs.start(['otter', 'serve', '--acp'], env)
    await call(a, 1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    const made = await call(a, 2, 'session/new', { cwd, mcpServers: [] })
    const sessionId = (made.result as { sessionId: string }).sessionId
    a.child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: '!sleep 60000\n!say never' }] } })}\n`,
    )
    const dir = join(home, 'eventlog', sessionId)
    // The step's start is written whole once its line is in the segment (appended after its file):
    // nothing more is written until the sleep ends.
    await waitFor(async () => (segmentText(dir).includes('"type":"step_start"') ? true : undefined), 'the turn')
    const before = snapshot(dir)
    const holder = `is open in another chimera process (PID ${a.child.pid}, chimera otter, since`

    const r = procs.start(['code', '--mode', 'rpc', '--cwd', cwd, '--session', sessionId], env)
    r.child.stdin.write(`${JSON.stringify({ type: 'prompt', id: 'p', message: '!say from rpc' })}\n`)
    const answer = await r.waitLine((m) => m.type === 'response' && m.id === 'p', 15_000)
    expect(answer).toMatchObject({ success: false })
    expect(String(answer.error)).toContain(`session ${sessionId} ${holder}`)

    const c = procs.start(['otter', 'serve', '--acp'], env)
    await call(c, 1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    const loaded = await call(c, 2, 'session/load', { sessionId, cwd, mcpServers: [] })
    expect(loaded.error).toBeUndefined()
    // The replay: the history as session/update notifications, the running turn's prompt among them.
    expect(c.lines().some((m) => m.method === 'session/update' && JSON.stringify(m).includes('!sleep 60000'))).toBe(
      true,
    )
    const prompted = await call(c, 3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say from c' }] })
    expect(prompted.error).toMatchObject({ code: -32602, data: { error: 'session_busy' } })
    expect(JSON.stringify(prompted.error)).toContain(holder)
    expect(snapshot(dir)).toEqual(before)
  }, 60_000)
})

describe('a session closed over ACP', () => {
  it('is let go: once `session/close` has answered, another process writes it', async () => {
    const home = procs.temp.make('one-writer-close-')
    const cwd = procs.temp.make('one-writer-ws-')
    const env = { CHIMERA_HOME: home }
    const a = procs.start(['ferret', 'serve'], env)
    await call(a, 1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    const made = await call(a, 2, 'session/new', { cwd, mcpServers: [] })
    const sessionId = (made.result as { sessionId: string }).sessionId
    const said = await call(a, 3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say in zed' }] })
    expect(said.result).toMatchObject({ stopReason: 'end_turn' })
    const marker = join(home, 'eventlog', sessionId, 'owner.json')
    expect(existsSync(marker)).toBe(true)
    expect((await call(a, 4, 'session/close', { sessionId })).error).toBeUndefined()
    await waitFor(async () => (existsSync(marker) ? undefined : true), 'the marker to go')

    // The ACP process still runs; a `code --mode rpc --session` of the session it closed writes it.
    const r = procs.start(['code', '--mode', 'rpc', '--cwd', cwd, '--session', sessionId], env)
    r.child.stdin.write(`${JSON.stringify({ type: 'prompt', id: 'p', message: '!say from rpc' })}\n`)
    const answer = await r.waitLine((m) => m.type === 'response' && m.id === 'p', 15_000)
    expect(answer).toMatchObject({ success: true })
    expect(a.child.exitCode).toBeNull()
  }, 60_000)
})
