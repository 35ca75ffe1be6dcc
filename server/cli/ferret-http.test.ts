/**
 * `chimera ferret serve --http`: ACP on stdio and HTTP on a socket in one process, over one
 * session manager, with FERRET_SERVER_TOKEN as the master token. The ACP side on main serves
 * `initialize` only (no ACP session methods yet), so the prompt here crosses HTTP families
 * rather than transports: a session created with the master token is driven with its own
 * session token, its SSE stream carries the turn, the plural family shows the same session,
 * and the ACP connection keeps answering throughout.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'

const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  temp.cleanup()
})

async function until<T>(get: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = get()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('ferret serve --http: ACP and HTTP in one process', () => {
  it('one session manager behind both; the master token is FERRET_SERVER_TOKEN', async () => {
    const child = spawn(process.execPath, [CLI_BUNDLE, 'ferret', 'serve', '--http', '--port', '0'], {
      env: { ...process.env, CHIMERA_HOME: temp.make('ferret-http-'), CHIMERA_LOG_LEVEL: 'info', FERRET_SERVER_TOKEN: 'f3rret' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    children.push(child)
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    const acp = (id: number): Promise<Record<string, unknown>> =>
      until(() => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((m) => m.id === id), `ACP reply ${id}`)
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    expect(await acp(1)).toMatchObject({ result: { protocolVersion: 1 } })
    const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+) \(bearer auth on\)/.exec(err)?.[1], 'the start-up line')

    const master = { authorization: 'Bearer f3rret', 'content-type': 'application/json' }
    expect((await fetch(`${url}/session`, { method: 'POST' })).status).toBe(401)
    const created = (await (await fetch(`${url}/session`, { method: 'POST', headers: master })).json()) as { session_id: string; session_token: string }
    const own = { authorization: `Bearer ${created.session_token}`, 'content-type': 'application/json' }
    const res = await fetch(`${url}/session/${created.session_id}/events`, { headers: own })
    expect(res.status).toBe(200)
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    void (async () => {
      for (;;) {
        const r = await reader.read().catch(() => ({ done: true, value: undefined }))
        if (r.done) return
        text += r.value
      }
    })()
    expect((await fetch(`${url}/session/${created.session_id}/message`, { method: 'POST', headers: own, body: JSON.stringify({ message: '!say from http' }) })).status).toBe(202)
    await until(() => (/event: result\n/.test(text) ? true : undefined), 'the result record')
    expect(text).toMatch(/event: user_message\ndata: .*"text":"!say from http"/)
    expect(text).toMatch(/event: result\ndata: .*"output":"from http"/)
    // The plural family sees the same session (master token only: the session token is 403 there).
    expect((await fetch(`${url}/sessions/${created.session_id}`, { headers: own })).status).toBe(403)
    const shown = (await (await fetch(`${url}/sessions/${created.session_id}`, { headers: master })).json()) as { events: { type: string }[] }
    expect(shown.events.map((e) => e.type)).toContain('agent_result')
    // ACP is still served by the same process, in between.
    child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}\n')
    expect(await acp(2)).toMatchObject({ error: { code: -32601 } })
    await reader.cancel()
    child.kill('SIGTERM')
    expect(await new Promise((r) => child.on('exit', (code) => r(code)))).toBe(0)
  }, 30_000)
})
