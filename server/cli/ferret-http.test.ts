/**
 * `chimera ferret serve --http`: ACP on stdio and HTTP on a socket in one process, over one
 * session manager, with FERRET_SERVER_TOKEN as the master token. The first test drives a
 * session across the HTTP families (master token, then its own session token) while ACP keeps
 * answering; the second crosses transports: a session opened over ACP v1 is prompted over ACP
 * and its turn streams to an SSE client, then a message sent over HTTP streams back to the ACP
 * client as `session/update`s.
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

function startFerret(): { child: ChildProcessWithoutNullStreams; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'ferret', 'serve', '--http', '--port', '0'], {
    env: {
      ...process.env,
      CHIMERA_HOME: temp.make('ferret-http-'),
      CHIMERA_LOG_LEVEL: 'info',
      FERRET_SERVER_TOKEN: 'f3rret',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  return { child, out: () => out, err: () => err }
}

/** Read an SSE body into a growing string (until cancelled). */
function collect(res: Response): { text: () => string; cancel: () => Promise<void> } {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  void (async () => {
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true, value: undefined }))
      if (r.done) return
      text += r.value
    }
  })()
  return { text: () => text, cancel: () => reader.cancel() }
}

describe('ferret serve --http: ACP and HTTP in one process', () => {
  it('a prompt sent over ACP streams to an SSE client, and a message sent over HTTP streams to the ACP client', async () => {
    const { child, out, err } = startFerret()
    const frames = () =>
      out()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    const acp = (id: number): Promise<Record<string, unknown>> =>
      until(() => frames().find((m) => m.id === id), `ACP reply ${id}`)
    const send = (id: number, method: string, params: unknown) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    send(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    expect(await acp(1)).toMatchObject({ result: { protocolVersion: 1 } })
    const url = await until(
      () => /listening on (http:\/\/127\.0\.0\.1:\d+) \(bearer auth on\)/.exec(err())?.[1],
      'the start-up line',
    )
    const cwd = temp.make('ferret-ws-')
    send(2, 'session/new', { cwd, mcpServers: [] })
    const sessionId = ((await acp(2)).result as { sessionId: string }).sessionId
    expect(sessionId).toMatch(/^ferret-/)

    // An SSE client on the HTTP side follows the ACP session live.
    const master = { authorization: 'Bearer f3rret', 'content-type': 'application/json' }
    const res = await fetch(`${url}/session/${sessionId}/events?from=live`, { headers: master })
    expect(res.status).toBe(200)
    const sse = collect(res)
    send(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say from acp' }] })
    expect(await acp(3)).toMatchObject({ result: { stopReason: 'end_turn' } })
    await until(() => (/event: result\n/.test(sse.text()) ? true : undefined), 'the turn on SSE')
    expect(sse.text()).toMatch(/event: user_message\ndata: .*"text":"!say from acp"/)
    expect(sse.text()).toMatch(/event: result\ndata: .*"output":"from acp"/)

    // The reverse: a message over HTTP reaches the ACP client as session/update notifications.
    const before = frames().length
    expect(
      (
        await fetch(`${url}/session/${sessionId}/message`, {
          method: 'POST',
          headers: master,
          body: JSON.stringify({ message: '!say from http' }),
        })
      ).status,
    ).toBe(202)
    type Update = { sessionId: string; update: { sessionUpdate: string; content?: { text?: string } } }
    const replyText = () =>
      frames()
        .slice(before)
        .filter(
          (m) =>
            m.method === 'session/update' &&
            (m.params as Update).sessionId === sessionId &&
            (m.params as Update).update.sessionUpdate === 'agent_message_chunk',
        )
        .map((m) => (m.params as Update).update.content?.text ?? '')
        .join('')
    await until(() => (replyText().includes('from http') ? true : undefined), 'the HTTP turn on ACP')
    expect(
      frames()
        .slice(before)
        .some(
          (m) =>
            m.method === 'session/update' &&
            JSON.stringify(m.params).includes('"sessionUpdate":"user_message_chunk"') &&
            JSON.stringify(m.params).includes('!say from http'),
        ),
    ).toBe(true)
    await until(() => (/"output":"from http"/.test(sse.text()) ? true : undefined), 'the HTTP turn on SSE')

    // A rename over HTTP (PATCH /sessions/{id}) is a session_info_update to the ACP client, and session/list reports it.
    const patched = await fetch(`${url}/sessions/${sessionId}`, {
      method: 'PATCH',
      headers: master,
      body: JSON.stringify({ title: ' Login bug ' }),
    })
    expect(patched.status).toBe(200)
    expect(await patched.json()).toMatchObject({ session_id: sessionId, title: 'Login bug' })
    type Info = { sessionId: string; update: { sessionUpdate: string; title?: string | null } }
    const info = await until(
      () =>
        frames()
          .map((m) => m.params as Info)
          .find(
            (p) =>
              p?.sessionId === sessionId &&
              p.update?.sessionUpdate === 'session_info_update' &&
              p.update.title === 'Login bug',
          ),
      'the rename on ACP',
    )
    expect(info.update).toMatchObject({ title: 'Login bug', updatedAt: expect.stringMatching(/^\d{4}-/) })
    send(4, 'session/list', { cwd })
    expect(
      ((await acp(4)).result as { sessions: { sessionId: string; title?: string }[] }).sessions.find(
        (s) => s.sessionId === sessionId,
      )?.title,
    ).toBe('Login bug')
    // Cleared: the derived title (the first prompt's first line) comes back on both.
    expect(
      (
        await fetch(`${url}/sessions/${sessionId}`, {
          method: 'PATCH',
          headers: master,
          body: JSON.stringify({ title: null }),
        })
      ).status,
    ).toBe(200)
    await until(
      () =>
        frames()
          .map((m) => m.params as Info)
          .find(
            (p) =>
              p?.sessionId === sessionId &&
              p.update?.sessionUpdate === 'session_info_update' &&
              p.update.title === '!say from acp',
          ),
      'the cleared title on ACP',
    )
    send(5, 'session/list', { cwd })
    expect(
      ((await acp(5)).result as { sessions: { sessionId: string; title?: string }[] }).sessions.find(
        (s) => s.sessionId === sessionId,
      )?.title,
    ).toBe('!say from acp')
    await sse.cancel()
    child.kill('SIGTERM')
    expect(await new Promise((r) => child.on('exit', (code) => r(code)))).toBe(0)
  }, 30_000)

  it('one session manager behind both; the master token is FERRET_SERVER_TOKEN', async () => {
    const { child, out, err } = startFerret()
    const acp = (id: number): Promise<Record<string, unknown>> =>
      until(
        () =>
          out()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((m) => m.id === id),
        `ACP reply ${id}`,
      )
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    expect(await acp(1)).toMatchObject({ result: { protocolVersion: 1 } })
    const url = await until(
      () => /listening on (http:\/\/127\.0\.0\.1:\d+) \(bearer auth on\)/.exec(err())?.[1],
      'the start-up line',
    )

    const master = { authorization: 'Bearer f3rret', 'content-type': 'application/json' }
    expect((await fetch(`${url}/session`, { method: 'POST' })).status).toBe(401)
    const created = (await (await fetch(`${url}/session`, { method: 'POST', headers: master })).json()) as {
      session_id: string
      session_token: string
    }
    const own = { authorization: `Bearer ${created.session_token}`, 'content-type': 'application/json' }
    const res = await fetch(`${url}/session/${created.session_id}/events`, { headers: own })
    expect(res.status).toBe(200)
    const sse = collect(res)
    expect(
      (
        await fetch(`${url}/session/${created.session_id}/message`, {
          method: 'POST',
          headers: own,
          body: JSON.stringify({ message: '!say from http' }),
        })
      ).status,
    ).toBe(202)
    await until(() => (/event: result\n/.test(sse.text()) ? true : undefined), 'the result record')
    expect(sse.text()).toMatch(/event: user_message\ndata: .*"text":"!say from http"/)
    expect(sse.text()).toMatch(/event: result\ndata: .*"output":"from http"/)
    // The plural family sees the same session (master token only: the session token is 403 there).
    expect((await fetch(`${url}/sessions/${created.session_id}`, { headers: own })).status).toBe(403)
    const shown = (await (await fetch(`${url}/sessions/${created.session_id}`, { headers: master })).json()) as {
      events: { type: string }[]
    }
    expect(shown.events.map((e) => e.type)).toContain('agent_result')
    // ACP is still served by the same process, in between.
    child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}\n')
    expect(await acp(2)).toMatchObject({ error: { code: -32601 } })
    await sse.cancel()
    child.kill('SIGTERM')
    expect(await new Promise((r) => child.on('exit', (code) => r(code)))).toBe(0)
  }, 30_000)
})
