/**
 * The cloud bridge end to end on loopback, with real processes (docs/bridge.md): an editor-side
 * `chimera ferret serve --bridge …` driven over stdio by the official SDK client (the editor), a
 * `chimera relay serve`, and remote clients (the official SDK client over its WebSocket
 * transport) that reach the editor's session through the relay: prompting, approving a
 * permission the editor was asked too, the editor seeing the same session's updates;
 * `bridgeStatus` attached and detached; the relay killed and restarted (the link redials with
 * backoff, the remote client reconnects with initialize + session/load and loses nothing); bad
 * tokens refused; a relay with no editor answering 503. CHIMERA_SHOW_WIRE=1 prints the remote
 * client's wire.
 */
import { execFileSync, spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import * as acp from '@agentclientprotocol/sdk'
import { createWebSocketStream, type WebSocketConstructor } from '@agentclientprotocol/sdk/experimental/ws-client'
import { WebSocket } from 'ws'
import { afterEach, describe, expect, it } from 'vitest'
import { connectRemoteAgent } from '../../client/node/acp-remote.ts'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { BridgeStatus } from '../../generated/schemas.gen.ts'
import { tapAgent } from '../acp/fixtures/v1-frames.ts'

const BRIDGE_TOKEN = 'bridge-secret-0123456789'
const CLIENT_TOKEN = 'client-secret-9876543210'
const temp = tempDirs()
const children: ChildProcess[] = []
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue
    const gone = new Promise((r) => c.once('exit', r))
    c.kill('SIGKILL')
    await gone
  }
  temp.cleanup()
})

type Update = acp.SessionNotification['update']

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => res(port))
    })
    s.on('error', rej)
  })
}

/** Stderr of a child, and a gate that opens when a line matching `re` has appeared `n` times. */
function watch(child: ChildProcess) {
  let text = ''
  const waits: { re: RegExp; n: number; resolve: () => void }[] = []
  const check = () => {
    for (const w of [...waits])
      if ((text.match(new RegExp(w.re.source, 'g')) ?? []).length >= w.n) {
        waits.splice(waits.indexOf(w), 1)
        w.resolve()
      }
  }
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    text += d
    check()
  })
  return {
    text: () => text,
    until: (re: RegExp, n = 1) =>
      new Promise<void>((resolve, reject) => {
        waits.push({ re, n, resolve })
        child.once('exit', (code) => reject(new Error(`exited (${code}) before ${re}:\n${text}`)))
        check()
      }),
  }
}

async function startRelay(port: number, extra: string[] = []) {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'relay', 'serve', '--port', String(port), ...extra], {
    env: { ...process.env, CHIMERA_RELAY_BRIDGE_TOKEN: BRIDGE_TOKEN, CHIMERA_RELAY_CLIENT_TOKENS: CLIENT_TOKEN },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  children.push(child)
  const log = watch(child)
  await log.until(/relay listening on/)
  return { child, log }
}

function startEditorFerret(port: number, token = BRIDGE_TOKEN, scheme = 'ws', env: NodeJS.ProcessEnv = {}) {
  const home = temp.make('bridge-home-')
  const ws = temp.make('bridge-ws-')
  const child = spawn(
    process.execPath,
    [
      CLI_BUNDLE,
      'ferret',
      'serve',
      '--approval',
      'ask',
      '--cwd',
      ws,
      '--bridge',
      `${scheme}://127.0.0.1:${port}/bridge`,
    ],
    {
      env: { ...process.env, CHIMERA_HOME: home, FERRET_BRIDGE_TOKEN: token, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  children.push(child)
  const log = watch(child)
  return { child, ws, log, ...tapAgent(child as ChildProcessWithoutNullStreams) }
}

/** The `ws` constructor, recording every frame the remote client sends and receives. */
function tappedWebSocket(wire: string[]): WebSocketConstructor {
  class Tapped extends WebSocket {
    constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
      super(url, protocols, options)
      this.on('message', (d: Buffer) => wire.push(`<- ${d.toString('utf8')}`))
    }
    override send(data: string): void {
      wire.push(`-> ${data}`)
      super.send(data)
    }
  }
  return Tapped as unknown as WebSocketConstructor
}

/** A remote client: the official SDK client over its WebSocket transport to the relay's /acp. */
function remoteClient(
  port: number,
  wire: string[],
  answer: (p: acp.RequestPermissionRequest) => Promise<string>,
  onUpdate?: (all: Update[]) => void,
) {
  const updates: Update[] = []
  const app = acp
    .client({ name: 'remote-console' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update)
      onUpdate?.(updates)
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => ({
      outcome: { outcome: 'selected', optionId: await answer(params) },
    }))
  const stream = createWebSocketStream(`ws://127.0.0.1:${port}/acp`, {
    WebSocket: tappedWebSocket(wire),
    headers: { authorization: `Bearer ${CLIENT_TOKEN}` },
  })
  return { app, stream, updates }
}

const initParams = (name: string) => ({
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: {},
  clientInfo: { name, version: '0' },
})

const texts = (updates: Update[], kind: string): string =>
  updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => (u as { content: { text: string } }).content.text)
    .join('')

/** What a client knows of the session: user prompts, agent text, and each tool call's last status. */
function history(updates: Update[]) {
  const tools = new Map<string, string | undefined>()
  for (const u of updates)
    if (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update')
      tools.set(u.toolCallId, (u as { status?: string }).status ?? tools.get(u.toolCallId))
  return { user: texts(updates, 'user_message_chunk'), agent: texts(updates, 'agent_message_chunk'), tools }
}

/**
 * A gate, waited for at most `ms`: past it the test goes on to its comparisons, so a view that never
 * completes fails with the two views side by side rather than with the test's time-out.
 */
const atMost = async (gate: Promise<void>, ms = 15_000): Promise<void> => {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([gate, new Promise<void>((r) => (timer = setTimeout(r, ms)))])
  clearTimeout(timer)
}

const show = (title: string, lines: string[]): void => {
  if (process.env.CHIMERA_SHOW_WIRE) process.stdout.write(`--- ${title}\n${lines.join('\n')}\n`)
}

/** The editor's side: the SDK client on ferret's stdio, asked permissions it leaves to the remote client. */
function editorClient(onUpdate?: (all: Update[]) => void) {
  const updates: Update[] = []
  const asked: string[] = []
  let withdrawn = 0
  const app = acp
    .client({ name: 'editor' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update)
      onUpdate?.(updates)
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      asked.push(params.toolCall.toolCallId)
      // The person at the editor does not click: the remote client answers, and this ask is withdrawn.
      await new Promise<void>((r) =>
        signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true }),
      )
      withdrawn++
      return { outcome: { outcome: 'cancelled' } }
    })
  return { app, updates, asked, withdrawn: () => withdrawn }
}

describe('the cloud bridge: ferret dials out to a relay, remote clients reach the editor session', () => {
  it('a remote client drives the editor session through the relay: prompt, permission approved, same updates', async () => {
    const port = await freePort()
    const relay = await startRelay(port)
    const editorProc = startEditorFerret(port)
    await editorProc.log.until(/bridge attached to ws:\/\/127\.0\.0\.1:\d+\/bridge/)
    expect(editorProc.log.text()).not.toContain(BRIDGE_TOKEN)
    await relay.log.until(/editor attached/)
    // The editor's copy of the remote turn's whole reply: its stdio and the remote client's
    // WebSocket are two channels, so the remote client's answer does not mean the editor has it all.
    let editorHasReply!: () => void
    const editorReply = new Promise<void>((r) => (editorHasReply = r))
    const editor = editorClient((all) => {
      if (/Write ok: Created remote\.txt \(10 bytes\)$/.test(history(all).agent)) editorHasReply()
    })
    const wire: string[] = []

    await editor.app.connectWith(editorProc.stream, async (ed) => {
      await ed.request(acp.methods.agent.initialize, initParams('editor'))
      const { sessionId } = await ed.request(acp.methods.agent.session.new, { cwd: editorProc.ws, mcpServers: [] })
      await ed.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!say written in the editor' }],
      })
      const before = (await ed.request('_ferret/session/bridgeStatus', { sessionId })) as BridgeStatus
      expect(before).toMatchObject({ attached: true, relay: `ws://127.0.0.1:${port}/bridge`, clients: 0, failures: 0 })
      expect(Date.parse(before.since!)).not.toBeNaN()

      const approvals: string[] = []
      const remote = remoteClient(port, wire, async (p) => {
        approvals.push(p.toolCall.toolCallId)
        return p.options.find((o) => o.kind === 'allow_once')!.optionId
      })
      await remote.app.connectWith(remote.stream, async (rc) => {
        const init: acp.InitializeResponse = await rc.request(
          acp.methods.agent.initialize,
          initParams('remote-console'),
        )
        expect(init.agentCapabilities?.loadSession).toBe(true)
        const listed = await rc.request(acp.methods.agent.session.list, {})
        expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId)
        await rc.request(acp.methods.agent.session.load, { sessionId, cwd: editorProc.ws, mcpServers: [] })
        // The history the editor wrote is replayed to the remote client.
        expect(texts(remote.updates, 'agent_message_chunk')).toBe('written in the editor')
        const status = (await rc.request('_ferret/session/bridgeStatus', { sessionId })) as BridgeStatus
        expect(status).toMatchObject({ attached: true, clients: 1 })

        editor.updates.length = 0
        remote.updates.length = 0
        const r = await rc.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!call Write {"path":"remote.txt","content":"from afar\\n"}' }],
        })
        expect(r.stopReason).toBe('end_turn')
      })
      await atMost(editorReply)
      expect(readFileSync(join(editorProc.ws, 'remote.txt'), 'utf8')).toBe('from afar\n')
      // Asked of both; the remote client answered, the editor's ask was withdrawn.
      expect(approvals).toHaveLength(1)
      expect(editor.asked).toEqual(approvals)
      expect(editor.withdrawn()).toBe(1)
      // The editor saw the remote turn live: the same tool call, completed, and the same reply.
      const seen = history(editor.updates)
      expect(seen.user).toBe('!call Write {"path":"remote.txt","content":"from afar\\n"}')
      expect(seen.tools.get(approvals[0]!)).toBe('completed')
      expect(seen.agent).toBe(history(remote.updates).agent)
      expect(seen.agent).toContain('Write ok')
      await editorProc.log.until(/remote client \w+ disconnected/)
      const after = (await ed.request('_ferret/session/bridgeStatus', { sessionId })) as BridgeStatus
      expect(after).toMatchObject({ attached: true, clients: 0 })

      // The client package's remote helper reaches the same session through the relay.
      const pkg = connectRemoteAgent({
        url: `ws://127.0.0.1:${port}`,
        token: CLIENT_TOKEN,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
      })
      await pkg.agent.request(acp.methods.agent.initialize, initParams('client-package'))
      await pkg.agent.request(acp.methods.agent.session.load, { sessionId, cwd: editorProc.ws, mcpServers: [] })
      expect(await pkg.ext.bridgeStatus({ sessionId })).toMatchObject({ attached: true, clients: 1 })
      pkg.close()
      await pkg.closed
    })
    show('remote client ⇄ relay (ws://127.0.0.1:<port>/acp)', wire)
    expect(wire.some((l) => l.startsWith('<- ') && l.includes('session/request_permission'))).toBe(true)
  }, 90_000)

  it('the relay killed and restarted: the link redials with backoff, the remote client reloads and loses nothing', async () => {
    const port = await freePort()
    let relay = await startRelay(port)
    const editorProc = startEditorFerret(port)
    await editorProc.log.until(/bridge attached/)
    // The turn's whole reply (the offline model sends it word by word), seen by the editor: the gate
    // for comparing the two views once both have the end of the turn.
    const wholeReply = /Write ok: Created later\.txt \(5 bytes\)$/
    let editorEnded!: () => void
    const editorTurnEnded = new Promise<void>((r) => (editorEnded = r))
    const editor = editorClient((all) => {
      if (wholeReply.test(history(all).agent)) editorEnded()
    })
    const wire: string[] = []
    const statuses: BridgeStatus[] = []

    await editor.app.connectWith(editorProc.stream, async (ed) => {
      await ed.request(acp.methods.agent.initialize, initParams('editor'))
      const { sessionId } = await ed.request(acp.methods.agent.session.new, { cwd: editorProc.ws, mcpServers: [] })
      await ed.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!say one' }] })

      // 1. A remote client starts a turn that waits for a permission, and holds it unanswered.
      let asked!: () => void
      const pendingAsk = new Promise<void>((r) => (asked = r))
      const first = remoteClient(port, wire, () => {
        asked()
        return new Promise<string>(() => undefined)
      })
      let inFlight: Promise<unknown> | undefined
      const firstDone = first.app.connectWith(first.stream, async (rc) => {
        await rc.request(acp.methods.agent.initialize, initParams('remote-console'))
        await rc.request(acp.methods.agent.session.load, { sessionId, cwd: editorProc.ws, mcpServers: [] })
        inFlight = rc.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!call Write {"path":"later.txt","content":"kept\\n"}' }],
        })
        inFlight.catch(() => undefined)
        await pendingAsk
        // 2. The relay dies with the prompt in flight and the permission pending.
        wire.push('*** relay killed (SIGKILL)')
        relay.child.kill('SIGKILL')
        await expect(inFlight).rejects.toBeDefined()
      })
      await firstDone.catch(() => undefined)
      const seenBefore = history(first.updates)

      await editorProc.log.until(/bridge link lost/)
      await editorProc.log.until(/bridge dial failed/)
      const down = (await ed.request('_ferret/session/bridgeStatus', { sessionId })) as BridgeStatus
      statuses.push(down)
      expect(down).toMatchObject({ attached: false, relay: `ws://127.0.0.1:${port}/bridge` })
      expect(down.failures).toBeGreaterThanOrEqual(1)
      expect(down.lastError).toBeTruthy()
      expect(down.reason).toMatch(/redialling/)
      // The turn still waits: the editor's own ask of the permission was not withdrawn by the drop.
      expect(editor.withdrawn()).toBe(0)

      // 3. The relay comes back on the same port; the link redials on its own.
      relay = await startRelay(port)
      await editorProc.log.until(/bridge attached/, 2)
      const up = (await ed.request('_ferret/session/bridgeStatus', { sessionId })) as BridgeStatus
      statuses.push(up)
      expect(up).toMatchObject({ attached: true, failures: 0 })
      expect(up.lastError).toBe(down.lastError)
      wire.push('*** relay restarted; the remote client reconnects')

      // 4. The remote client reconnects: initialize + session/load replays everything, and the
      // pending permission is asked again; approved, the turn finishes.
      let ended!: () => void
      const turnEnded = new Promise<void>((r) => (ended = r))
      const second = remoteClient(
        port,
        wire,
        async (p) => p.options.find((o) => o.kind === 'allow_once')!.optionId,
        (all) => {
          if (wholeReply.test(history(all).agent)) ended()
        },
      )
      await second.app.connectWith(second.stream, async (rc) => {
        await rc.request(acp.methods.agent.initialize, initParams('remote-console'))
        await rc.request(acp.methods.agent.session.load, { sessionId, cwd: editorProc.ws, mcpServers: [] })
        const replayed = history(second.updates)
        // Everything the first connection saw is in the replay.
        expect(replayed.user.startsWith(seenBefore.user)).toBe(true)
        expect(replayed.agent.startsWith(seenBefore.agent)).toBe(true)
        for (const id of seenBefore.tools.keys()) expect(replayed.tools.has(id)).toBe(true)
        await atMost(turnEnded)
      })
      await atMost(editorTurnEnded)
      expect(readFileSync(join(editorProc.ws, 'later.txt'), 'utf8')).toBe('kept\n')
      // The reconnected client's view equals the editor's uninterrupted one.
      const editorView = history(editor.updates)
      const remoteView = history(second.updates)
      // (The editor is not sent back the prompt it sent itself; the remote client was.)
      expect(remoteView.user).toBe(`!say one${editorView.user}`)
      expect(editorView.user).toBe('!call Write {"path":"later.txt","content":"kept\\n"}')
      expect(remoteView.agent).toBe(editorView.agent)
      expect([...remoteView.tools]).toEqual([...editorView.tools])
      expect([...editorView.tools.values()]).toEqual(['completed'])
    })
    show('reconnect: remote client ⇄ relay', wire)
    show(
      'bridgeStatus while down, then up',
      statuses.map((s) => JSON.stringify(s)),
    )
    show(
      'ferret stderr (bridge lines)',
      editorProc.log
        .text()
        .split('\n')
        .filter((l) => /bridge/.test(l)),
    )
  }, 120_000)

  it('refuses unknown tokens, answers 503 with no editor attached, and reports a refused bridge token', async () => {
    const port = await freePort()
    const relay = await startRelay(port)
    const upgrade = (path: string, token: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } })
        ws.on('unexpected-response', (_req, res) => {
          let body = ''
          res.setEncoding('utf8').on('data', (d: string) => (body += d))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        })
        ws.on('open', () => reject(new Error(`${path} opened with ${token}`)))
        ws.on('error', () => undefined)
      })
    expect(await upgrade('/acp', 'wrong')).toEqual({
      status: 401,
      body: '{"error":"unauthorized","message":"missing or invalid bearer token"}',
    })
    // The bridge token is not a client token, nor the reverse.
    expect((await upgrade('/acp', BRIDGE_TOKEN)).status).toBe(401)
    expect((await upgrade('/bridge', CLIENT_TOKEN)).status).toBe(401)
    expect(await upgrade('/acp', CLIENT_TOKEN)).toEqual({
      status: 503,
      body: '{"error":"service_unavailable","message":"no editor is attached to this relay"}',
    })
    const sdk = remoteClient(port, [], async () => 'never')
    await expect(
      sdk.app.connectWith(sdk.stream, (rc) => rc.request(acp.methods.agent.initialize, initParams('remote'))),
    ).rejects.toThrow(/503/)

    // An editor with the wrong bridge token is refused and says so in bridgeStatus, without the token.
    const editorProc = startEditorFerret(port, 'not-the-bridge-token')
    await editorProc.log.until(/bridge dial failed: the relay answered HTTP 401/)
    const editor = editorClient()
    await editor.app.connectWith(editorProc.stream, async (ed) => {
      await ed.request(acp.methods.agent.initialize, initParams('editor'))
      const { sessionId } = await ed.request(acp.methods.agent.session.new, { cwd: editorProc.ws, mcpServers: [] })
      const s = (await ed.request('_ferret/session/bridgeStatus', { sessionId })) as BridgeStatus
      expect(s).toMatchObject({
        attached: false,
        lastError: 'the relay answered HTTP 401 (it refused the bridge token)',
        reason: 'the relay could not be reached; redialling',
      })
      expect(s.failures).toBeGreaterThanOrEqual(1)
      expect(Date.parse(s.retryAt!)).not.toBeNaN()
    })
    expect(editorProc.log.text()).not.toContain('not-the-bridge-token')
    expect(relay.log.text()).not.toContain(BRIDGE_TOKEN)
    expect(relay.log.text()).not.toContain(CLIENT_TOKEN)
  }, 60_000)

  it('over TLS: ferret dials wss:// and a remote client reaches it through the relay over wss://', async () => {
    const dir = temp.make('bridge-tls-')
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    )
    const port = await freePort()
    const relay = await startRelay(port, ['--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')])
    expect(relay.log.text()).toContain(`relay listening on https://127.0.0.1:${port}`)
    const editorProc = startEditorFerret(port, BRIDGE_TOKEN, 'wss', { NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') })
    await editorProc.log.until(/bridge attached to wss:\/\/127\.0\.0\.1:\d+\/bridge/)
    // A remote client trusting the relay's certificate: initialize through the relay over TLS.
    const ws = new WebSocket(`wss://127.0.0.1:${port}/acp`, {
      headers: { authorization: `Bearer ${CLIENT_TOKEN}` },
      ca: readFileSync(join(dir, 'cert.pem')),
    })
    const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
      ws.on('open', () =>
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initParams('tls-client') })),
      )
      ws.on('message', (d: Buffer) => resolve(JSON.parse(d.toString('utf8')) as Record<string, unknown>))
      ws.on('error', reject)
    })
    ws.close()
    expect(answer).toMatchObject({ id: 1, result: { protocolVersion: 1, agentInfo: { name: 'chimera-ferret' } } })
    // A client that does not trust the certificate gets no connection at all.
    const untrusted = new WebSocket(`wss://127.0.0.1:${port}/acp`, {
      headers: { authorization: `Bearer ${CLIENT_TOKEN}` },
    })
    await expect(
      new Promise((resolve, reject) => {
        untrusted.on('open', resolve)
        untrusted.on('error', reject)
      }),
    ).rejects.toThrow(/self-signed|certificate/)
  }, 60_000)
})
