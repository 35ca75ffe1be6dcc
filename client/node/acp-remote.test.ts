/**
 * connectRemoteAgent against a real `chimera otter serve` with a master token, over both
 * transports, and the client snippet of docs/remote-acp.md run as written (its package imports
 * resolved to this checkout's builds) in a process of its own.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { client, methods, PROTOCOL_VERSION } from '@agentclientprotocol/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { connectRemoteAgent } from './acp-remote.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TOKEN = 'remote-client-token'
const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  temp.cleanup()
})

async function startOtter(): Promise<{ url: string; cwd: string }> {
  const cwd = temp.make('remote-client-ws-')
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--port', '0', '--auth-token', TOKEN], {
    cwd,
    env: { ...process.env, CHIMERA_HOME: temp.make('remote-client-home-') },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  const deadline = Date.now() + 15_000
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(err)?.[1]
    if (url) return { url, cwd }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start:\n${err}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('connectRemoteAgent: the SDK client over /acp with the bearer token', () => {
  it('prompts over Streamable HTTP and WebSocket; a wrong token closes the connection', async () => {
    const { url, cwd } = await startOtter()
    for (const transport of ['http', 'ws'] as const) {
      let text = ''
      const app = client({ name: 'helper' }).onNotification(methods.client.session.update, ({ params }) => {
        const u = params.update
        if (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text') text += u.content.text
      })
      const remote = connectRemoteAgent({ url, token: TOKEN, transport, WebSocket, app })
      const init = await remote.agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {},
      })
      expect(init.agentInfo?.name).toBe('chimera-otter')
      const { sessionId } = await remote.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })
      expect(await remote.ext.state({ sessionId })).toMatchObject({ sessionId, status: 'idle' })
      const r = await remote.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: `!say via ${transport}` }],
      })
      expect(r.stopReason).toBe('end_turn')
      expect(text).toBe(`via ${transport}`)
      remote.close()
      await remote.closed
    }
    const bad = connectRemoteAgent({ url, token: 'wrong' })
    await expect(
      bad.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} }),
    ).rejects.toThrow()
    await bad.closed
    expect(bad.signal.aborted).toBe(true)
    expect(() => connectRemoteAgent({ url, transport: 'ws' })).toThrow(/WebSocket constructor/)
  })

  it('runs the client snippet of docs/remote-acp.md as written', async () => {
    const doc = readFileSync(join(ROOT, 'docs/remote-acp.md'), 'utf8')
    const snippet = /<!-- remote-acp: client snippet -->\n```js\n([\s\S]*?)\n```/.exec(doc)?.[1]
    expect(snippet).toBeDefined()
    // The page's imports, resolved to this checkout: the SDK and ws from node_modules, the client from its build.
    const require = createRequire(join(ROOT, 'package.json'))
    const resolved: Record<string, string> = {
      '@agentclientprotocol/sdk': pathToFileURL(require.resolve('@agentclientprotocol/sdk')).href,
      '@chimera-agent/client/node': pathToFileURL(join(ROOT, 'dist/client/node.mjs')).href,
      ws: pathToFileURL(join(ROOT, 'node_modules/ws/wrapper.mjs')).href,
    }
    let code = snippet!
    for (const [name, href] of Object.entries(resolved)) code = code.replace(`from '${name}'`, `from '${href}'`)
    expect(code).not.toMatch(/from '(?!file:)/)
    const { url, cwd } = await startOtter()
    const file = join(temp.make('remote-client-snippet-'), 'snippet.mjs')
    writeFileSync(file, code)
    const run = spawn(process.execPath, [file], {
      cwd,
      env: { ...process.env, CHIMERA_URL: url, OTTER_SERVER_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    run.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    run.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    const exit = await new Promise<number | null>((r) => run.on('exit', r))
    expect(exit, err).toBe(0)
    expect(out).toBe('http end_turn hello over http\nws end_turn hello over ws\n')
  })
})
