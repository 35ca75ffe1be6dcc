/**
 * `/acp` on a real `chimera otter serve` process (docs/remote-acp.md), driven by the official
 * SDK's own client transports (`createHttpStream`, `createWebSocketStream` with `ws`): one session
 * on every wire (ACP over HTTP and WS, REST, SSE), the guards (token, session-token scope,
 * Host, Origin, CORS), the limits (message size, connection cap, a client that stops reading),
 * and a dropped connection followed by `initialize` + `session/load`, with a permission request
 * that waits for a client instead of being denied, answered by whichever client answers first.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import * as acp from '@agentclientprotocol/sdk'
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client'
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'

const TOKEN = 'acp-master-token'
const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
const sockets: WebSocket[] = []
afterEach(() => {
  for (const s of sockets.splice(0)) s.terminate()
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  temp.cleanup()
})

async function until<T>(get: () => T | undefined | Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await get()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function startOtter(env: Record<string, string> = {}, args: string[] = []) {
  const cwd = temp.make('acp-remote-ws-')
  const child = spawn(
    process.execPath,
    [CLI_BUNDLE, 'otter', 'serve', '--port', '0', '--auth-token', TOKEN, '--cwd', cwd, ...args],
    { env: { ...process.env, CHIMERA_HOME: temp.make('acp-remote-home-'), ...env }, stdio: ['pipe', 'pipe', 'pipe'] },
  )
  children.push(child)
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1], 'the start-up line')
  return { url, ws: url.replace(/^http/, 'ws'), cwd, err: () => err }
}

const auth = (token = TOKEN) => ({ authorization: `Bearer ${token}` })
const json = { 'content-type': 'application/json' }
const short = (s: string) => s.replace(/otter-\d{8}T\d{6}Z-[0-9a-f-]{36}/g, 'otter-…').replace(/[0-9a-f-]{36}/g, '…')

/** A fetch that writes every request and response of the SDK's HTTP transport to `log`. */
function tapFetch(log: string[]): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init)
    const body = req.method === 'POST' ? await req.clone().text() : ''
    const sid = req.headers.get('acp-session-id')
    log.push(`> ${req.method} /acp${sid ? ' [Acp-Session-Id]' : ''}${body ? ` ${body}` : ''}`)
    const res = await fetch(req)
    const cid = res.headers.get('acp-connection-id')
    log.push(`< ${res.status}${cid ? ' Acp-Connection-Id: …' : ''}`)
    if (!res.body || !res.headers.get('content-type')?.includes('text/event-stream')) return res
    const [mine, theirs] = res.body.tee()
    void (async () => {
      let rest = ''
      const reader = theirs.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        rest += value
        const lines = rest.split('\n')
        rest = lines.pop()!
        for (const l of lines) if (l.startsWith('data:')) log.push(`< (sse${sid ? ' session' : ''}) ${l}`)
      }
    })().catch(() => undefined)
    return new Response(mine, { status: res.status, headers: res.headers })
  }
}

/** A `ws` WebSocket the test can cut, writing its frames to `log`. */
function tapWebSocket(log: string[]) {
  return class TapWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[], opts?: { headers?: Record<string, string> }) {
      super(url, protocols, opts)
      sockets.push(this)
      this.on('message', (d) => log.push(`< ${String(d)}`))
      this.on('close', (code) => log.push(`  (socket closed ${code})`))
      const send = this.send.bind(this)
      this.send = ((data: string, ...rest: never[]) => {
        log.push(`> ${data}`)
        return send(data, ...rest)
      }) as never
    }
  }
}

/** An SSE response body read into a growing string. */
function collect(res: Response): { text: () => string; cancel: () => Promise<void> } {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  void (async () => {
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }))
      if (r.done) return
      text += r.value
    }
  })()
  return { text: () => text, cancel: () => reader.cancel() }
}

type Update = acp.SessionNotification['update']
const texts = (updates: Update[], kind: string) =>
  updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => ('content' in u && u.content && 'text' in u.content ? u.content.text : ''))
    .join('')

describe('/acp: ACP over Streamable HTTP and WebSocket', () => {
  it('an SDK client prompts over HTTP; the session streams on SSE, is listed, and is prompted over REST', async () => {
    const s = await startOtter()
    const wire: string[] = []
    const sse: string[] = []
    const updates: Update[] = []
    const stream = createHttpStream(`${s.url}/acp`, { headers: auth(), fetch: tapFetch(wire) })
    await acp
      .client({ name: 'remote-ide' })
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params.update))
      .connectWith(stream, async (ctx) => {
        const init = await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        })
        expect(init.agentCapabilities?.loadSession).toBe(true)
        const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: s.cwd, mcpServers: [] })
        // The same session, live on its REST SSE route.
        const events = await fetch(`${s.url}/session/${sessionId}/events?from=live`, { headers: auth() })
        expect(events.status).toBe(200)
        const live = collect(events)
        const answer = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!say hello over acp' }],
        })
        expect(answer.stopReason).toBe('end_turn')
        expect(texts(updates, 'agent_message_chunk')).toContain('hello over acp')
        await until(() => (/"output":"hello over acp"/.test(live.text()) ? true : undefined), 'the turn on SSE')
        sse.push(
          ...live
            .text()
            .split('\n')
            .filter((l) => l.startsWith('event:') || l.startsWith('data:')),
        )

        // Listed by GET /sessions, and prompted over REST: the ACP client sees that turn too.
        const list = (await (await fetch(`${s.url}/sessions`, { headers: auth() })).json()) as {
          sessions: { session_id: string }[]
        }
        expect(list.sessions.map((x) => x.session_id)).toContain(sessionId)
        const rest = await fetch(`${s.url}/session/${sessionId}/message`, {
          method: 'POST',
          headers: { ...auth(), ...json },
          body: JSON.stringify({ message: '!say from rest' }),
        })
        expect(rest.status).toBe(202)
        await until(
          () => (texts(updates, 'agent_message_chunk').includes('from rest') ? true : undefined),
          'the REST turn on /acp',
        )
        expect(texts(updates, 'user_message_chunk')).toContain('!say from rest')
        await live.cancel()
      })
    console.log(['SDK client over /acp (Streamable HTTP):', ...wire.map(short)].join('\n'))
    console.log(['The same session on GET /session/{id}/events:', ...sse.map(short)].join('\n'))
    expect(wire.some((l) => l.startsWith('> POST /acp {"jsonrpc":"2.0","id":0,"method":"initialize"'))).toBe(true)
    expect(wire.some((l) => /^< \(sse session\) data: .*"stopReason":"end_turn"/.test(l))).toBe(true)
  })

  it('over WebSocket, a session token loads its REST-created session (history replayed) and is held to it', async () => {
    const s = await startOtter()
    const created = await fetch(`${s.url}/session`, {
      method: 'POST',
      headers: { ...auth(), ...json },
      body: JSON.stringify({ working_dir: s.cwd }),
    })
    const { session_id: sessionId, session_token: sessionToken } = (await created.json()) as {
      session_id: string
      session_token: string
    }
    const other = (await (await fetch(`${s.url}/session`, { method: 'POST', headers: auth() })).json()) as {
      session_id: string
    }
    const events = collect(await fetch(`${s.url}/session/${sessionId}/events`, { headers: auth(sessionToken) }))
    await fetch(`${s.url}/session/${sessionId}/message`, {
      method: 'POST',
      headers: { ...auth(sessionToken), ...json },
      body: JSON.stringify({ message: '!say made over rest' }),
    })
    await until(() => (/"output":"made over rest"/.test(events.text()) ? true : undefined), 'the REST turn')
    await events.cancel()

    const updates: Update[] = []
    const wire: string[] = []
    const stream = createWebSocketStream(`${s.ws}/acp`, {
      WebSocket: tapWebSocket(wire) as never,
      headers: auth(sessionToken),
    })
    await acp
      .client({ name: 'remote-ws' })
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params.update))
      .connectWith(stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        })
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: s.cwd, mcpServers: [] })
        // The history came before the load's answer.
        expect(texts(updates, 'user_message_chunk')).toContain('!say made over rest')
        expect(texts(updates, 'agent_message_chunk')).toContain('made over rest')
        const answer = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!say over websocket' }],
        })
        expect(answer.stopReason).toBe('end_turn')
        expect(texts(updates, 'agent_message_chunk')).toContain('over websocket')
        // The token's scope: another session, a new one, the listing.
        for (const call of [
          () =>
            ctx.request(acp.methods.agent.session.load, { sessionId: other.session_id, cwd: s.cwd, mcpServers: [] }),
          () => ctx.request(acp.methods.agent.session.new, { cwd: s.cwd, mcpServers: [] }),
          () => ctx.request(acp.methods.agent.session.list, {}),
        ]) {
          await expect(call()).rejects.toMatchObject({ code: -32000 })
        }
      })
    expect(wire.some((l) => l.includes('"method":"session/load"'))).toBe(true)
  })

  it('a session token over /acp starts no MCP server and is not asked what only the master token answers', async () => {
    const s = await startOtter({}, ['--approval', 'ask'])
    const created = await fetch(`${s.url}/session`, {
      method: 'POST',
      headers: { ...auth(), ...json },
      body: JSON.stringify({ working_dir: s.cwd }),
    })
    const { session_id: sessionId, session_token: sessionToken } = (await created.json()) as {
      session_id: string
      session_token: string
    }
    const pwned = join(s.cwd, 'pwned')
    const asked: unknown[] = []
    await acp
      .client({ name: 'scoped' })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        asked.push(params)
        return { outcome: { outcome: 'selected' as const, optionId: 'allow' } }
      })
      .connectWith(createHttpStream(`${s.url}/acp`, { headers: auth(sessionToken) }), async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        })
        // Its own session, with an MCP server to start: refused, and nothing runs.
        const mcpServers = [{ name: 'x', command: '/bin/sh', args: ['-c', `id > ${pwned}`], env: [] }]
        for (const method of [acp.methods.agent.session.load, acp.methods.agent.session.resume])
          await expect(ctx.request(method, { sessionId, cwd: s.cwd, mcpServers })).rejects.toMatchObject({
            code: -32000,
          })
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: s.cwd, mcpServers: [] })
        // A tool that asks: this connection is not asked; the master answers over REST.
        const turn = ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!call Write {"path":"by-master.txt","content":"ok\\n"}' }],
        })
        const events = collect(await fetch(`${s.url}/session/${sessionId}/events`, { headers: auth() }))
        const requestId = await until(
          () => /"type":"permission_request".*?"request_id":"([^"]+)"/.exec(events.text())?.[1],
          'the permission request',
        )
        await events.cancel()
        const approved = await fetch(`${s.url}/tool/approve`, {
          method: 'POST',
          headers: { ...auth(), ...json },
          body: JSON.stringify({ session_id: sessionId, request_id: requestId, decision: 'allow' }),
        })
        expect(approved.status).toBe(200)
        expect((await turn).stopReason).toBe('end_turn')
      })
    expect(asked).toEqual([])
    expect(existsSync(join(s.cwd, 'by-master.txt'))).toBe(true)
    expect(existsSync(pwned)).toBe(false)
  })

  it('refuses a missing or wrong token, a foreign Host or Origin, on HTTP and on the WebSocket upgrade', async () => {
    const s = await startOtter({}, ['--cors', 'https://app.example'])
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } })
    const post = (headers: Record<string, string>) =>
      fetch(`${s.url}/acp`, { method: 'POST', headers: { ...json, ...headers }, body: init })
    expect((await post({})).status).toBe(401)
    expect((await post(auth('wrong'))).status).toBe(401)
    expect((await post({ ...auth(), origin: 'https://evil.example' })).status).toBe(403)
    const ok = await post({ ...auth(), origin: 'https://app.example' })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(ok.headers.get('access-control-expose-headers')).toContain('acp-connection-id')
    const pre = await fetch(`${s.url}/acp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-headers')).toContain('acp-session-id')

    // A connection belongs to its principal: a session token cannot use the master's connection.
    const cid = ok.headers.get('acp-connection-id')!
    const { session_token: st } = (await (
      await fetch(`${s.url}/session`, { method: 'POST', headers: auth() })
    ).json()) as { session_token: string }
    const foreign = await fetch(`${s.url}/acp`, {
      method: 'GET',
      headers: { ...auth(st), accept: 'text/event-stream', 'acp-connection-id': cid },
    })
    expect(foreign.status).toBe(404)

    // Host is checked below fetch's reach: a raw upgrade and a raw POST.
    const upgrade = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${s.ws}/acp`, { headers })
        sockets.push(ws)
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
        ws.on('open', () => resolve(101))
        ws.on('error', () => undefined)
      })
    expect(await upgrade({})).toBe(401)
    expect(await upgrade(auth('wrong'))).toBe(401)
    expect(await upgrade({ ...auth(), origin: 'https://evil.example' })).toBe(403)
    expect(await upgrade({ ...auth(), host: 'rebound.example' })).toBe(421)
    expect(await upgrade(auth())).toBe(101)
    const { request } = await import('node:http')
    const status = await new Promise<number>((resolve, reject) => {
      const r = request(`${s.url}/acp`, { method: 'POST', headers: { ...auth(), ...json, host: 'rebound.example' } })
      r.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)))
      r.on('error', reject)
      r.end(init)
    })
    expect(status).toBe(421)
  })

  it('limits a message (POST 413, WebSocket close 1009) and the number of connections (503)', async () => {
    const s = await startOtter({ CHIMERA_ACP_MAX_MESSAGE_BYTES: '65536', CHIMERA_ACP_MAX_CONNECTIONS: '2' })
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: 1, _meta: { pad: 'x'.repeat(100_000) } },
    })
    expect((await fetch(`${s.url}/acp`, { method: 'POST', headers: { ...auth(), ...json }, body: big })).status).toBe(
      413,
    )
    const ws = new WebSocket(`${s.ws}/acp`, { headers: auth() })
    sockets.push(ws)
    await new Promise((r) => ws.once('open', r))
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)))
    ws.send(big)
    expect(await closed).toBe(1009)

    const init = (id: number) =>
      fetch(`${s.url}/acp`, {
        method: 'POST',
        headers: { ...auth(), ...json },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: 1 } }),
      })
    // The closed socket's connection ends first (a gate, not a wait): two fit, the third does not.
    await until(async () => ((await init(2)).status === 200 ? true : undefined), 'a free connection')
    expect((await init(3)).status).toBe(200)
    const third = await init(4)
    expect(third.status).toBe(503)
    expect(await third.json()).toMatchObject({ error: 'service_unavailable' })
  })

  it('closes an HTTP connection left with no stream and no request, and a WebSocket that answers no ping', async () => {
    const s = await startOtter({ CHIMERA_ACP_IDLE_MS: '200', CHIMERA_ACP_PING_MS: '100' })
    const opened = await fetch(`${s.url}/acp`, {
      method: 'POST',
      headers: { ...auth(), ...json },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }),
    })
    const cid = opened.headers.get('acp-connection-id')!
    await until(() => (s.err().includes(`ACP connection ${cid}: idle`) ? true : undefined), 'the idle reaper')
    const after = await fetch(`${s.url}/acp`, {
      method: 'GET',
      headers: { ...auth(), accept: 'text/event-stream', 'acp-connection-id': cid },
    })
    expect(after.status).toBe(404)
    // A WebSocket client that answers pings stays; one that does not is cut.
    const polite = new WebSocket(`${s.ws}/acp`, { headers: auth() })
    const silent = new WebSocket(`${s.ws}/acp`, { headers: auth(), autoPong: false })
    sockets.push(polite, silent)
    let pings = 0
    polite.on('ping', () => pings++)
    const politeClosed = new Promise<void>((r) => polite.once('close', () => r()))
    let politeOpen = true
    void politeClosed.then(() => (politeOpen = false))
    const cut = new Promise<number>((r) => silent.once('close', (code) => r(code)))
    expect(await cut).toBe(1006)
    await until(() => (pings >= 3 ? true : undefined), 'three pings answered')
    expect(politeOpen).toBe(true)
  })

  it('closes a connection whose client stops reading, with its held output bounded; the session goes on', async () => {
    const s = await startOtter({
      CHIMERA_ACP_MAX_BUFFERED_BYTES: '2048',
      CHIMERA_ACP_MAX_MESSAGE_BYTES: '1024',
      CHIMERA_ACP_STALL_MS: '300',
    })
    const made = (await (
      await fetch(`${s.url}/session`, {
        method: 'POST',
        headers: { ...auth(), ...json },
        body: JSON.stringify({ working_dir: s.cwd }),
      })
    ).json()) as { session_id: string }
    const sessionId = made.session_id
    const post = (cid: string | null, body: object, headers: Record<string, string> = {}) =>
      fetch(`${s.url}/acp`, {
        method: 'POST',
        headers: { ...auth(), ...json, ...(cid ? { 'acp-connection-id': cid } : {}), ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', ...body }),
      })
    const opened = await post(null, { id: 1, method: 'initialize', params: { protocolVersion: 1 } })
    const cid = opened.headers.get('acp-connection-id')!
    // It never opens a stream: every load's replay and answer wait for it, up to the limit.
    const statuses: number[] = []
    await until(async () => {
      const r = await post(
        cid,
        { id: 10 + statuses.length, method: 'session/load', params: { sessionId, cwd: s.cwd, mcpServers: [] } },
        { 'acp-session-id': sessionId },
      )
      statuses.push(r.status)
      return r.status === 404 ? true : undefined
    }, 'the stalled connection to close')
    expect(statuses[0]).toBe(202)
    expect(statuses.at(-1)).toBe(404)
    // The server and the session are fine: a reading client loads it.
    const updates: Update[] = []
    await acp
      .client({ name: 'reader' })
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params.update))
      .connectWith(createHttpStream(`${s.url}/acp`, { headers: auth() }), async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        })
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: s.cwd, mcpServers: [] })
        const r = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!say still here' }],
        })
        expect(r.stopReason).toBe('end_turn')
      })
    expect(texts(updates, 'agent_message_chunk')).toContain('still here')
  })

  it('a dropped connection leaves its permission request pending; initialize + session/load replays and re-asks it; first answer wins', async () => {
    const s = await startOtter({}, ['--approval', 'ask'])
    const wire: string[] = []
    const Tap = tapWebSocket(wire)
    // Client A (WebSocket) prompts an edit, is asked, and its socket is cut before it answers.
    let asked!: () => void
    const wasAsked = new Promise<void>((r) => (asked = r))
    let sessionId = ''
    const a = acp
      .client({ name: 'dropped' })
      .onRequest(acp.methods.client.session.requestPermission, async () => {
        asked()
        return await new Promise<never>(() => undefined)
      })
      .connectWith(createWebSocketStream(`${s.ws}/acp`, { WebSocket: Tap as never, headers: auth() }), async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        })
        sessionId = (await ctx.request(acp.methods.agent.session.new, { cwd: s.cwd, mcpServers: [] })).sessionId
        await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!call Write {"path":"kept.txt","content":"yes\\n"}' }],
        })
      })
      .catch((err: unknown) => err)
    await wasAsked
    wire.push('  -- the client socket is cut (no close frame) --')
    sockets.at(-1)!.terminate()
    await a
    // Nobody denied it: the request is still pending (REST sees the session waiting for it).
    const events = collect(await fetch(`${s.url}/session/${sessionId}/events`, { headers: auth() }))
    await until(() => (/"type":"permission_request"/.test(events.text()) ? true : undefined), 'the request in the log')
    expect(events.text()).not.toMatch(/"type":"permission_reply"/)

    // Client B (HTTP) and client C (WebSocket) reconnect: initialize + session/load, each re-asked.
    const seen = { b: 0, c: 0, withdrawn: 0 }
    const bUpdates: Update[] = []
    let bAsked!: () => void
    const bWasAsked = new Promise<void>((r) => (bAsked = r))
    let cAsked!: () => void
    const cWasAsked = new Promise<void>((r) => (cAsked = r))
    const b = acp
      .client({ name: 'b' })
      .onNotification(acp.methods.client.session.update, ({ params }) => void bUpdates.push(params.update))
      .onRequest(acp.methods.client.session.requestPermission, async ({ signal }) => {
        seen.b++
        bAsked()
        await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r())))
        seen.withdrawn++
        return { outcome: { outcome: 'cancelled' as const } }
      })
    const c = acp.client({ name: 'c' }).onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      seen.c++
      await bWasAsked
      cAsked()
      return {
        outcome: {
          outcome: 'selected' as const,
          optionId: params.options.find((o) => o.kind === 'allow_once')!.optionId,
        },
      }
    })
    let cDone!: () => void
    const cLoaded = new Promise<void>((r) => (cDone = r))
    const bRun = b.connectWith(createHttpStream(`${s.url}/acp`, { headers: auth() }), async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} })
      await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: s.cwd, mcpServers: [] })
      await cLoaded
    })
    await bWasAsked
    await c.connectWith(
      createWebSocketStream(`${s.ws}/acp`, { WebSocket: Tap as never, headers: auth() }),
      async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        })
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: s.cwd, mcpServers: [] })
        await cWasAsked
        await until(() => (/"type":"permission_reply"/.test(events.text()) ? true : undefined), 'the answer in the log')
        await until(() => (seen.withdrawn === 1 ? true : undefined), 'B to see the request withdrawn')
        cDone()
      },
    )
    await bRun
    await until(() => (/event: result/.test(events.text()) ? true : undefined), 'the turn to finish')
    await events.cancel()
    expect(seen).toEqual({ b: 1, c: 1, withdrawn: 1 })
    expect(existsSync(join(s.cwd, 'kept.txt'))).toBe(true)
    // B's load replayed the history first: the prompt and the pending tool call.
    expect(texts(bUpdates, 'user_message_chunk')).toContain('!call Write')
    expect(bUpdates.some((u) => u.sessionUpdate === 'tool_call')).toBe(true)
    // A REST answer to a request nobody holds is refused: it was answered once, by C.
    console.log(['A dropped WebSocket and the reconnect (WS frames):', ...wire.map(short)].join('\n'))
    expect(wire.some((l) => l.includes('(socket closed 1006)'))).toBe(true)
  })

  it('ferret serve --http serves /acp beside stdio: a session opened on stdio is loaded over /acp', async () => {
    const cwd = temp.make('acp-remote-ferret-ws-')
    const child = spawn(process.execPath, [CLI_BUNDLE, 'ferret', 'serve', '--http', '--port', '0', '--cwd', cwd], {
      env: {
        ...process.env,
        CHIMERA_HOME: temp.make('acp-remote-ferret-home-'),
        CHIMERA_LOG_LEVEL: 'info',
        FERRET_SERVER_TOKEN: TOKEN,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    children.push(child)
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    const reply = (id: number) =>
      until(
        () =>
          out
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { id?: number; result?: { sessionId?: string } })
            .find((m) => m.id === id),
        `stdio reply ${id}`,
      )
    const send = (id: number, method: string, params: unknown) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    send(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    await reply(1)
    send(2, 'session/new', { cwd, mcpServers: [] })
    const sessionId = (await reply(2)).result!.sessionId!
    send(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say from stdio' }] })
    await reply(3)
    const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1], 'the start-up line')
    const updates: Update[] = []
    await acp
      .client({ name: 'remote-ferret' })
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params.update))
      .connectWith(createHttpStream(`${url}/acp`, { headers: auth() }), async (ctx) => {
        const init = await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        })
        expect(init.agentInfo?.name).toBe('chimera-ferret')
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] })
        expect(texts(updates, 'agent_message_chunk')).toContain('from stdio')
        expect(await ctx.request('_ferret/session/bridgeStatus', { sessionId })).toMatchObject({ attached: false })
      })
    // The stdio client is still served.
    send(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say still stdio' }] })
    expect(await reply(4)).toMatchObject({ result: { stopReason: 'end_turn' } })
  })
})
