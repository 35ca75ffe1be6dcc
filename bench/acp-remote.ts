// ACP over the network (/acp, docs/remote-acp.md) against ACP over stdio, in the same run, with
// the official SDK's client on every transport and the built CLI as the agent. Prints; asserts
// nothing. Loopback, offline model.
//   1. prompt round trip: `session/prompt` `!say hi` to its `end_turn` answer (median of
//      BENCH_PROMPTS, default 40, after 5 warm-up prompts), over stdio (`chimera otter serve
//      --acp`), Streamable HTTP and WebSocket (`chimera otter serve`, bearer token on);
//   2. notifications per second: `_chimera/session/replay` of a session whose turn streamed
//      BENCH_WORDS (default 1000) words, one `agent_message_chunk` each, written before the
//      replay's answer (best of 3).
// Each network figure is printed with its ratio to stdio's.
// Run: node_modules/.bin/tsx bench/acp-remote.ts
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type ClientContext } from '@agentclientprotocol/sdk'
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client'
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client'
import { WebSocket } from 'ws'
import { CLI_BUNDLE } from '../conformance/harness/targets.ts'

const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 40)
const WORDS = Number(process.env.BENCH_WORDS ?? 1000)
const TOKEN = 'bench-token'
const dirs: string[] = []
const temp = (p: string): string => {
  const d = mkdtempSync(join(tmpdir(), p))
  dirs.push(d)
  return d
}
const children: ChildProcess[] = []
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

function agent(args: string[], level = 'warn'): ChildProcess {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', ...args], {
    env: { ...process.env, CHIMERA_HOME: temp('bench-acp-home-'), CHIMERA_LOG_LEVEL: level },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  return child
}

async function httpServer(): Promise<string> {
  const child = agent(['--port', '0', '--auth-token', TOKEN], 'info')
  child.stderr!.setEncoding('utf8')
  let err = ''
  child.stderr!.on('data', (d: string) => (err += d))
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(err)?.[1]
    if (url) return url
    if (child.exitCode !== null) throw new Error(`otter serve exited:\n${err}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

interface Figures {
  roundTripMs: number
  notificationsPerSecond: number
}

/** One transport's connection with a session: `prompt` and `replay` timed by the caller. */
async function open(stream: ReturnType<typeof createHttpStream>) {
  const counter = { chunks: 0 }
  const cwd = temp('bench-acp-ws-')
  const app = client({ name: 'bench' }).onNotification(methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === 'agent_message_chunk') counter.chunks++
  })
  const conn = app.connect(stream)
  const ctx: ClientContext = conn.agent
  await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} })
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] })
  const prompt = (text: string) =>
    ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] })
  for (let i = 0; i < 5; i++) await prompt('!say hi')
  // One turn of WORDS chunks (built untimed), for the replay figure.
  await prompt(`!say ${Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ')}`)
  return {
    counter,
    prompt,
    replay: () => ctx.request('_chimera/session/replay', { sessionId, sinceEventId: 0 }),
    close: () => conn.close(),
  }
}

try {
  // One agent process per transport, so none shares its process with another.
  const stdio = agent(['--acp'])
  const [httpUrl, wsUrl] = await Promise.all([httpServer(), httpServer()])
  const headers = { authorization: `Bearer ${TOKEN}` }
  const transports = {
    stdio: await open(
      ndJsonStream(
        Writable.toWeb(stdio.stdin!) as WritableStream<Uint8Array>,
        Readable.toWeb(stdio.stdout!) as ReadableStream<Uint8Array>,
      ),
    ),
    http: await open(createHttpStream(`${httpUrl}/acp`, { headers })),
    ws: await open(
      createWebSocketStream(`${wsUrl.replace(/^http/, 'ws')}/acp`, { WebSocket: WebSocket as never, headers }),
    ),
  }
  type Name = keyof typeof transports
  const names = Object.keys(transports) as Name[]
  const rt: Record<Name, number[]> = { stdio: [], http: [], ws: [] }
  const rate: Record<Name, number> = { stdio: 0, http: 0, ws: 0 }
  // Interleaved, so the machine's load falls on every transport alike.
  for (let i = 0; i < PROMPTS; i++) {
    for (const n of names) {
      const t0 = performance.now()
      await transports[n].prompt('!say hi')
      rt[n].push(performance.now() - t0)
    }
  }
  for (let run = 0; run < 3; run++) {
    for (const n of names) {
      const t = transports[n]
      t.counter.chunks = 0
      const t0 = performance.now()
      await t.replay()
      rate[n] = Math.max(rate[n], t.counter.chunks / ((performance.now() - t0) / 1000))
    }
  }
  for (const t of Object.values(transports)) t.close()
  const figures = (n: Name): Figures => ({ roundTripMs: median(rt[n]), notificationsPerSecond: rate[n] })
  const base = figures('stdio')
  const row = (name: string, f: Figures): string =>
    `  ${name.padEnd(22)} round trip ${f.roundTripMs.toFixed(2).padStart(6)} ms (${(f.roundTripMs / base.roundTripMs).toFixed(2)}× stdio)   ` +
    `notifications ${Math.round(f.notificationsPerSecond).toString().padStart(6)}/s (${(f.notificationsPerSecond / base.notificationsPerSecond).toFixed(2)}× stdio)`
  console.log(
    `ACP over /acp vs stdio (median of ${PROMPTS} prompts each, interleaved; replay of a ${WORDS}-chunk turn, best of 3)`,
  )
  console.log(row('stdio (baseline)', base))
  console.log(row('/acp Streamable HTTP', figures('http')))
  console.log(row('/acp WebSocket', figures('ws')))
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
  await new Promise((r) => setTimeout(r, 300))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
}
