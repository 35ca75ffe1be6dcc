/**
 * The official SDK client against the spawned `chimera ferret serve`, for the ACP v1 items an
 * IDE sees beyond the basic session: the model's plan (`plan` from the update_plan tool, with
 * no permission asked), the session title (`session_info_update` after the first prompt only),
 * the stop reasons `max_turn_requests` (the session's step limit, `_meta["chimera/maxSteps"]`)
 * and `refusal` (an OpenAI-compatible provider, played by a loopback server in this file, that
 * finishes with `content_filter`), and a Write over an existing file whose diff carries the old
 * text. Every frame the agent wrote is checked against the official v1 schema.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as acp from '@agentclientprotocol/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { invalidAgentFrames, tapAgent } from './fixtures/v1-frames.ts'

const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
const servers: Server[] = []
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r))
  temp.cleanup()
})

function startFerret(args: string[], env: Record<string, string> = {}) {
  const home = temp.make('acp-gaps-home-')
  const ws = temp.make('acp-gaps-ws-')
  const child = spawn(process.execPath, [CLI_BUNDLE, 'ferret', 'serve', '--cwd', ws, ...args], {
    env: { ...process.env, CHIMERA_HOME: home, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return { child, ws, exited, stderr: () => stderr, ...tapAgent(child) }
}

type Update = acp.SessionNotification['update']

/** A client that records updates and permission requests, allowing each once. */
function recordingClient() {
  const updates: Update[] = []
  const asked: acp.RequestPermissionRequest[] = []
  const app = acp
    .client({ name: 'test-ide' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update)
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asked.push(params)
      return {
        outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once')!.optionId },
      }
    })
  return { app, updates, asked }
}

const INIT = {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: {},
  clientInfo: { name: 'test-ide', version: '0' },
}

/** A loopback OpenAI-compatible endpoint whose model refuses: some text, then `finish_reason: content_filter`. */
async function refusingProvider(): Promise<string> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end()
        return
      }
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'refuser', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(chunk({ role: 'assistant', content: 'I cannot help with that.' }, null))
      res.write(chunk({}, 'content_filter'))
      res.end('data: [DONE]\n\n')
    })
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
}

describe('ACP v1 gaps through the official SDK client', () => {
  it('shows the plan without asking, names the session once, and stops at the step limit with max_turn_requests', async () => {
    const agent = startFerret(['--approval', 'ask'])
    const { app, updates, asked } = recordingClient()
    await app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, INIT)
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })

      // 1. The plan: one `plan` update with the complete list (priority defaulted), no permission asked.
      const plan = {
        entries: [
          { content: 'read the code', status: 'completed', priority: 'high' },
          { content: 'fix the bug', status: 'in_progress' },
        ],
      }
      const r1 = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: `  \nplan the work\n!call update_plan ${JSON.stringify(plan)}` }],
      })
      expect(r1.stopReason).toBe('end_turn')
      expect(asked).toEqual([])
      const plans = updates.filter((u) => u.sessionUpdate === 'plan')
      expect(plans).toEqual([
        {
          sessionUpdate: 'plan',
          entries: [
            { content: 'read the code', priority: 'high', status: 'completed' },
            { content: 'fix the bug', priority: 'medium', status: 'in_progress' },
          ],
          _meta: expect.objectContaining({ 'chimera/toolCallId': expect.any(String) }),
        },
      ])
      const call = updates.find((u) => u.sessionUpdate === 'tool_call') as acp.ToolCall
      expect(call).toMatchObject({ title: 'update_plan', kind: 'think', status: 'pending' })
      expect((plans[0]!._meta as Record<string, unknown>)['chimera/toolCallId']).toBe(call.toolCallId)

      // 2. The title: set by the first prompt (its first non-blank line), not by later ones.
      const infos = () => updates.filter((u) => u.sessionUpdate === 'session_info_update')
      expect(infos()).toEqual([
        {
          sessionUpdate: 'session_info_update',
          title: 'plan the work',
          updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          _meta: expect.any(Object),
        },
      ])
      await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!say second' }],
      })
      expect(infos()).toHaveLength(1)
      const listed = await ctx.request(acp.methods.agent.session.list, { cwd: agent.ws })
      expect(listed.sessions.find((s) => s.sessionId === sessionId)?.title).toBe('plan the work')

      // 3. A session with a one-step limit: a turn that wants a second step stops with max_turn_requests.
      const limited = await ctx.request(acp.methods.agent.session.new, {
        cwd: agent.ws,
        mcpServers: [],
        _meta: { 'chimera/maxSteps': 1 },
      })
      const r3 = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: limited.sessionId,
        prompt: [{ type: 'text', text: '!call Read {"path":"nothing.txt"}' }],
      })
      expect(r3.stopReason).toBe('max_turn_requests')
      const unlimited = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!call Read {"path":"nothing.txt"}' }],
      })
      expect(unlimited.stopReason).toBe('end_turn')
      await expect(
        ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [], _meta: { 'chimera/maxSteps': 0 } }),
      ).rejects.toMatchObject({ code: -32602 })
    })
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 30_000)

  it('answers refusal when the provider refuses (finish_reason content_filter)', async () => {
    const base = await refusingProvider()
    const agent = startFerret(['--model', 'openai-compatible/refuser'], {
      CHIMERA_OPENAI_BASE_URL: base,
      CHIMERA_OPENAI_API_KEY: 'test-key',
    })
    const { app, updates } = recordingClient()
    await app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, INIT)
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
      const r = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: 'do something bad' }],
      })
      expect(r.stopReason).toBe('refusal')
      const text = updates
        .filter((u) => u.sessionUpdate === 'agent_message_chunk')
        .map((u) => (u as { content: { text: string } }).content.text)
        .join('')
      expect(text).toBe('I cannot help with that.')
    })
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 30_000)

  it('shows a Write over an existing file with the old text in the tool_call and the permission request', async () => {
    const agent = startFerret(['--approval', 'ask'])
    const path = join(agent.ws, 'notes.txt')
    writeFileSync(path, 'old line\n')
    const { app, updates, asked } = recordingClient()
    await app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, INIT)
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
      const r = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!call Write {"path":"notes.txt","content":"new line\\n"}' }],
      })
      expect(r.stopReason).toBe('end_turn')
    })
    expect(readFileSync(path, 'utf8')).toBe('new line\n')
    const diff = [{ type: 'diff', path, oldText: 'old line\n', newText: 'new line\n' }]
    expect(updates.find((u) => u.sessionUpdate === 'tool_call')).toMatchObject({ kind: 'edit', content: diff })
    expect(asked).toHaveLength(1)
    expect(asked[0]!.toolCall.content).toEqual(diff)
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 30_000)

  it("takes a Write preview from the disk (verified), never from the editor's unverified buffer", async () => {
    const agent = startFerret(['--approval', 'allow'])
    writeFileSync(join(agent.ws, 'open.txt'), 'on disk old\n')
    const buffers = new Map<string, string>([[join(agent.ws, 'open.txt'), 'unsaved old\n']])
    const recorded = recordingClient()
    const updates = recorded.updates
    const app = recorded.app
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        const content = buffers.get(params.path)
        if (content === undefined) throw acp.RequestError.resourceNotFound(params.path)
        return { content }
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        buffers.set(params.path, params.content)
        return {}
      })
    await app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        ...INIT,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      })
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
      const text = '!call Write {"path":"open.txt","content":"new\\n"}\n!call Write {"path":"fresh.txt","content":"x"}'
      expect(
        (await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }))
          .stopReason,
      ).toBe('end_turn')
    })
    const diffs = updates.filter((u) => u.sessionUpdate === 'tool_call').map((u) => (u as acp.ToolCall).content)
    expect(diffs).toEqual([
      [{ type: 'diff', path: join(agent.ws, 'open.txt'), oldText: 'on disk old\n', newText: 'new\n' }],
      [{ type: 'diff', path: join(agent.ws, 'fresh.txt'), oldText: null, newText: 'x' }],
    ])
    expect(buffers.get(join(agent.ws, 'open.txt'))).toBe('new\n')
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 30_000)

  it("streams a client-terminal Bash command's output while it runs, not only at exit", async () => {
    const agent = startFerret(['--approval', 'allow', '--sandbox', 'danger-full-access'])
    let output = 'step 1\n'
    let sawProgress: () => void = () => {}
    const progressSeen = new Promise<void>((r) => (sawProgress = r))
    const progress: string[] = []
    const app = acp
      .client({ name: 'test-ide' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        const u = params.update
        if (u.sessionUpdate === 'tool_call_update' && u.status === undefined && u.content) {
          for (const c of u.content)
            if (c.type === 'content' && c.content.type === 'text') progress.push(c.content.text)
          if (progress.join('').includes('step 1')) sawProgress()
        }
      })
      .onRequest(acp.methods.client.terminal.create, () => ({ terminalId: 'term-1' }))
      .onRequest(acp.methods.client.terminal.output, () => ({ output, truncated: false }))
      // The command "runs" until the IDE has shown its first output: a gate, not a sleep.
      .onRequest(acp.methods.client.terminal.waitForExit, async () => {
        await progressSeen
        output += 'step 2\n'
        return { exitCode: 0, signal: null }
      })
      .onRequest(acp.methods.client.terminal.release, () => ({}))
    await app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { ...INIT, clientCapabilities: { terminal: true } })
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
      const r = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!call Bash {"command":"long job"}' }],
      })
      expect(r.stopReason).toBe('end_turn')
    })
    expect(progress.join('')).toBe('step 1\n')
    const done = agent.frames.find(
      (f) =>
        f.dir === 'out' &&
        f.msg.params?.update?.sessionUpdate === 'tool_call_update' &&
        f.msg.params.update.status === 'completed',
    )
    expect(JSON.stringify(done?.msg.params.update.rawOutput)).toContain('step 1\\nstep 2')
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 30_000)
})
