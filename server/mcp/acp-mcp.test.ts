/**
 * MCP servers an ACP client passes, end to end: the official ACP SDK client opens sessions on
 * the spawned `chimera ferret serve` with real MCP server processes (conformance/harness/fixtures/mcp-server.mjs,
 * the MCP SDK's McpServer over stdio). The offline model calls `mcp__…` tools; results come
 * back in `tool_call_update`s. Hostile servers: one that writes garbage to stdout, one whose
 * command does not exist, one that never answers initialize, one that exits at once, one that
 * crashes mid-call. Processes: none left after session/close, a timeout, or the end of input.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as acp from '@agentclientprotocol/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { invalidAgentFrames, tapAgent } from '../acp/fixtures/v1-frames.ts'
import { until } from '../core/fixtures/harness.ts'
import { startHttpMcp } from './fixtures/mcp-http-server.ts'

const FIXTURE = fileURLToPath(new URL('../../conformance/harness/fixtures/mcp-server.mjs', import.meta.url))
const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
const pidfiles: string[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  // A failed test may have killed the agent before it could end its servers: end them here.
  for (const f of pidfiles.splice(0)) for (const pid of pids(f).filter(alive)) process.kill(pid, 'SIGKILL')
  temp.cleanup()
})

function startFerret(env: Record<string, string> = {}, extra: string[] = []) {
  const home = temp.make('mcp-home-')
  const ws = temp.make('mcp-ws-')
  const child = spawn(process.execPath, [CLI_BUNDLE, 'ferret', 'serve', '--approval', 'ask', '--cwd', ws, ...extra], {
    env: { ...process.env, CHIMERA_HOME: home, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  pidfiles.push(join(home, 'pids.txt'))
  return { child, ws, home, exited, stderr: () => stderr, ...tapAgent(child) }
}

const server = (
  name: string,
  pidfile: string,
  mode = 'ok',
  env: { name: string; value: string }[] = [],
): acp.McpServer => ({
  name,
  command: process.execPath,
  args: [FIXTURE, `--mode=${mode}`],
  env: [{ name: 'FIXTURE_PIDFILE', value: pidfile }, ...env],
})

const pids = (file: string): number[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : []
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

type Update = acp.SessionNotification['update']
interface ToolUpdate {
  sessionUpdate: 'tool_call_update'
  status?: string
  content?: { type: string; content?: { text?: string } }[]
}

function client(updates: Update[], asked: acp.RequestPermissionRequest[]) {
  return acp
    .client({ name: 'test-ide' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update)
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      asked.push(params)
      return {
        outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once')!.optionId },
      }
    })
}

/** The final tool_call_update of the turn's (only) tool call: its status and text. */
function result(updates: Update[]): { status?: string; text: string } {
  const done = (updates as unknown as ToolUpdate[]).filter(
    (u) => u.sessionUpdate === 'tool_call_update' && u.status !== undefined && u.status !== 'in_progress',
  )
  const last = done.at(-1)
  return { status: last?.status, text: (last?.content ?? []).map((c) => c.content?.text ?? '').join('') }
}

interface McpMeta {
  servers: { name: string; status: string; tools?: string[]; error?: string }[]
}

describe('MCP servers of ACP sessions', () => {
  it('connects the servers a client passes, runs their tools, survives hostile ones and leaves no process', async () => {
    const agent = startFerret()
    const pidfile = join(agent.home, 'pids.txt')
    const updates: Update[] = []
    const asked: acp.RequestPermissionRequest[] = []
    await client(updates, asked).connectWith(agent.stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} })
      expect(init.agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: false })

      const created = await ctx.request(acp.methods.agent.session.new, {
        cwd: agent.ws,
        mcpServers: [
          server('fx', pidfile, 'ok', [{ name: 'FIXTURE_GREETING', value: 'hello-env' }]),
          server('junk', pidfile, 'garbage'),
          { name: 'nope', command: join(agent.ws, 'no-such-command'), args: [], env: [] },
        ],
      })
      const sessionId = created.sessionId
      const meta = created._meta?.['chimera/mcp'] as McpMeta
      expect(meta.servers.map((s) => [s.name, s.status])).toEqual([
        ['fx', 'connected'],
        ['junk', 'connected'],
        ['nope', 'failed'],
      ])
      expect(meta.servers[0]!.tools).toEqual([
        'mcp__fx__echo',
        'mcp__fx__where',
        'mcp__fx__picture',
        'mcp__fx__big',
        'mcp__fx__crash',
        'mcp__fx__fail',
        'mcp__fx__grow',
      ])
      expect(meta.servers[2]!.error).toMatch(/ENOENT/)
      await until(
        () =>
          updates.some(
            (u) =>
              u.sessionUpdate === 'agent_message_chunk' &&
              /MCP server "nope" is not available/.test((u.content as { text: string }).text),
          ),
        5000,
        'the warning about nope',
      )

      const call = async (line: string) => {
        updates.length = 0
        const r = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: line }],
        })
        expect(r.stopReason).toBe('end_turn')
        return result(updates)
      }

      // A call: permission asked (rule ask), the result in tool_call_update.
      expect(await call('!call mcp__fx__echo {"text":"hi there"}')).toEqual({
        status: 'completed',
        text: 'echo: hi there',
      })
      expect(asked.at(-1)!.toolCall).toMatchObject({ kind: 'other', rawInput: { text: 'hi there' } })
      expect(asked.at(-1)!._meta).toMatchObject({ 'chimera/risk': 'medium' })
      const started = updates.find((u) => u.sessionUpdate === 'tool_call') as { title?: string; kind?: string }
      expect(started).toMatchObject({ kind: 'other', title: 'mcp__fx__echo' })
      // The server runs in the session's cwd with the env the client gave.
      expect(await call('!call mcp__fx__where {}')).toEqual({ status: 'completed', text: `${agent.ws} hello-env` })
      // Image content is described; a huge output is bounded; isError fails the call.
      expect(await call('!call mcp__fx__picture {}')).toEqual({
        status: 'completed',
        text: '[image: image/png, 16 bytes]\na caption',
      })
      const big = await call('!call mcp__fx__big {"chars":3000000}')
      expect(big.status).toBe('completed')
      expect(big.text.length).toBeLessThan(110 * 1024)
      expect(big.text).toMatch(/output truncated: 2897600 more characters/)
      expect(await call('!call mcp__fx__fail {}')).toEqual({ status: 'failed', text: 'it went wrong' })
      // Arguments the schema requires are checked before the call.
      expect((await call('!call mcp__fx__echo {}')).text).toMatch(/missing required "text"/)
      // The server that printed garbage still works.
      expect(await call('!call mcp__junk__echo {"text":"ok"}')).toEqual({ status: 'completed', text: 'echo: ok' })
      // A crash mid-call fails the call, the turn ends normally, and the session goes on.
      const crashed = await call('!call mcp__junk__crash {}')
      expect(crashed.status).toBe('failed')
      expect(crashed.text).toMatch(/MCP server "junk".*exited during the call/)
      expect((await call('!call mcp__junk__echo {"text":"again"}')).text).toMatch(/unknown tool "mcp__junk__echo"/)
      // tools/list_changed (sent before the call's result): the new tool is offered from the next step.
      expect(await call('!call mcp__fx__grow {}')).toEqual({ status: 'completed', text: 'grown' })
      expect(await call('!call mcp__fx__late {}')).toEqual({ status: 'completed', text: 'late tool ran' })

      // Close: every server process is gone.
      const started2 = pids(pidfile)
      expect(started2).toHaveLength(2)
      expect(started2.filter(alive)).toHaveLength(1) // junk crashed
      await ctx.request(acp.methods.agent.session.close, { sessionId })
      expect(started2.filter(alive)).toEqual([])

      // Load reconnects the servers it is given; resume without servers has none.
      const loaded = await ctx.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: agent.ws,
        mcpServers: [server('fx', pidfile)],
      })
      expect((loaded._meta?.['chimera/mcp'] as McpMeta).servers.map((s) => s.status)).toEqual(['connected'])
      expect(await call('!call mcp__fx__echo {"text":"loaded"}')).toEqual({ status: 'completed', text: 'echo: loaded' })
      const resumed = await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: agent.ws })
      expect(resumed._meta?.['chimera/mcp']).toBeUndefined()
      expect((await call('!call mcp__fx__echo {"text":"resumed"}')).text).toMatch(/unknown tool "mcp__fx__echo"/)
      expect(pids(pidfile).filter(alive)).toEqual([])
    })
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
    expect(agent.stderr()).toMatch(/mcp junk: /)
  }, 60_000)

  it('gives up on a server that never answers and one that exits; ends servers when the input ends', async () => {
    const agent = startFerret({ CHIMERA_MCP_TIMEOUT_MS: '3000' })
    const pidfile = join(agent.home, 'pids.txt')
    const updates: Update[] = []
    let running: number[] = []
    await client(updates, []).connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} })
      const created = await ctx.request(acp.methods.agent.session.new, {
        cwd: agent.ws,
        mcpServers: [server('hang', pidfile, 'hang'), server('gone', pidfile, 'exit')],
      })
      const meta = created._meta?.['chimera/mcp'] as McpMeta
      expect(meta.servers).toEqual([
        { name: 'hang', status: 'failed', error: 'no answer within 3000 ms' },
        { name: 'gone', status: 'failed', error: expect.stringMatching(/Connection closed/) },
      ])
      // The session works without them.
      const r = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: created.sessionId,
        prompt: [{ type: 'text', text: '!say fine' }],
      })
      expect(r.stopReason).toBe('end_turn')
      await until(
        () => pids(pidfile).length === 2 && pids(pidfile).every((p) => !alive(p)),
        5000,
        'both servers to be gone',
      )

      // A healthy server of a session still open when the input ends is ended with the process.
      await ctx.request(acp.methods.agent.session.new, {
        cwd: agent.ws,
        mcpServers: [server('fx', pidfile, 'ok', [{ name: 'FIXTURE_STUBBORN', value: '1' }])],
      })
      running = pids(pidfile).filter(alive)
      expect(running).toHaveLength(1)
    })
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(running.filter(alive)).toEqual([])
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 60_000)

  it('ends the servers when the agent is stopped with SIGTERM', async () => {
    const agent = startFerret()
    const pidfile = join(agent.home, 'pids.txt')
    await client([], [])
      .connectWith(agent.stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} })
        // A server that ignores the end of its stdin: only the agent's signals end it.
        await ctx.request(acp.methods.agent.session.new, {
          cwd: agent.ws,
          mcpServers: [server('fx', pidfile, 'ok', [{ name: 'FIXTURE_STUBBORN', value: '1' }])],
        })
        expect(pids(pidfile).filter(alive)).toHaveLength(1)
        agent.child.kill('SIGTERM')
        await agent.exited
      })
      .catch(() => undefined) // the connection ends with the agent
    expect(pids(pidfile)).toHaveLength(1)
    await until(() => !alive(pids(pidfile)[0]!), 5000, 'the MCP server to end')
  }, 60_000)

  it('ends the servers of a session the manager evicts as idle', async () => {
    const agent = startFerret({}, ['--http', '--host', '127.0.0.1', '--port', '0', '--session-ttl', '1'])
    const pidfile = join(agent.home, 'pids.txt')
    await client([], []).connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} })
      await ctx.request(acp.methods.agent.session.new, {
        cwd: agent.ws,
        mcpServers: [server('fx', pidfile, 'ok', [{ name: 'FIXTURE_STUBBORN', value: '1' }])],
      })
      expect(pids(pidfile).filter(alive)).toHaveLength(1)
      await until(() => !alive(pids(pidfile)[0]!), 10_000, 'the MCP server of the evicted session to end')
    })
    agent.child.kill('SIGTERM')
    await agent.exited
    expect(agent.stderr()).toMatch(/evicted after 1 s idle/)
  }, 60_000)

  it('connects Streamable HTTP servers with the headers the client gave; refuses sse honestly', async () => {
    const web = await startHttpMcp('s3cret')
    try {
      const agent = startFerret()
      const updates: Update[] = []
      await client(updates, []).connectWith(agent.stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} })
        const created = await ctx.request(acp.methods.agent.session.new, {
          cwd: agent.ws,
          mcpServers: [
            { type: 'http', name: 'web', url: web.url, headers: [{ name: 'x-fixture-token', value: 's3cret' }] },
            { type: 'http', name: 'badtoken', url: web.url, headers: [{ name: 'x-fixture-token', value: 'wrong' }] },
            { type: 'sse', name: 'old', url: web.url, headers: [] },
          ],
        })
        const meta = created._meta?.['chimera/mcp'] as McpMeta
        expect(meta.servers.map((s) => [s.name, s.status])).toEqual([
          ['web', 'connected'],
          ['badtoken', 'failed'],
          ['old', 'failed'],
        ])
        expect(meta.servers[1]!.error).toMatch(/bad token/)
        expect(meta.servers[2]!.error).toMatch(/not supported/)
        const r = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId: created.sessionId,
          prompt: [{ type: 'text', text: '!call mcp__web__shout {"text":"quiet"}' }],
        })
        expect(r.stopReason).toBe('end_turn')
        expect(result(updates)).toEqual({ status: 'completed', text: 'QUIET' })
      })
      agent.child.stdin.end()
      expect(await agent.exited).toBe(0)
      expect(invalidAgentFrames(agent.frames)).toEqual([])
    } finally {
      await web.close()
    }
  }, 60_000)
})
