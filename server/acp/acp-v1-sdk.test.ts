/**
 * The official SDK's client (`@agentclientprotocol/sdk` 2.x `client().connectWith`, the
 * successor of `ClientSideConnection`) drives the spawned `chimera ferret serve --approval ask`
 * through a whole session as an IDE would: initialize, new, prompt (thought, message, usage),
 * an edit with a permission round-trip and its diff, a cancel that withdraws a pending
 * permission, set_config_option / set_mode / legacy set_model, list, close, load (replay
 * before the response), resume (no replay); then our extensions through the same client
 * (`_chimera/session/*`, `_ferret/session/*`, `_ferret/session/update` when asked for). Every
 * frame the agent wrote is checked against the official v1 schema + our extensions.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as acp from '@agentclientprotocol/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { FerretSessionUpdateParamsSchema, type FerretSessionUpdateParams } from '../../generated/acp/v1-methods.gen.ts'
import { invalidAgentFrames, tapAgent } from './fixtures/v1-frames.ts'
import { NO_BRIDGE } from './dialect.ts'

const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  temp.cleanup()
})

function startFerret(approval = 'ask', extra: string[] = []) {
  const home = temp.make('acp-home-')
  const ws = temp.make('acp-ws-')
  const child = spawn(
    process.execPath,
    [CLI_BUNDLE, 'ferret', 'serve', '--approval', approval, '--cwd', ws, ...extra],
    {
      env: { ...process.env, CHIMERA_HOME: home },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  children.push(child)
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return { child, ws, home, exited, stderr: () => stderr, ...tapAgent(child) }
}

type Update = acp.SessionNotification['update']

describe('ACP v1 through the official SDK client', () => {
  it('runs a whole IDE session against chimera ferret serve', async () => {
    const agent = startFerret()
    const updates: Update[] = []
    let permission: 'allow' | 'hold' = 'allow'
    const asked: acp.RequestPermissionRequest[] = []
    let withdrawn = 0
    let heldResolve: (() => void) | undefined
    const held = new Promise<void>((r) => (heldResolve = r))

    const app = acp
      .client({ name: 'test-ide' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        updates.push(params.update)
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
        asked.push(params)
        if (permission === 'allow')
          return {
            outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once')!.optionId },
          }
        heldResolve!()
        // Held until the agent withdraws it ($/cancel_request), as a user who never clicks.
        await new Promise<void>((r) =>
          signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true }),
        )
        withdrawn++
        return { outcome: { outcome: 'cancelled' } }
      })

    await app.connectWith(agent.stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
        clientInfo: { name: 'test-ide', version: '0' },
      })
      expect(init.protocolVersion).toBe(1)
      expect(init.agentCapabilities?.loadSession).toBe(true)
      expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, resume: {}, close: {} })
      expect(init.authMethods?.length).toBeGreaterThan(0)

      const created = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
      const sessionId = created.sessionId
      expect(created.modes?.currentModeId).toBe('build')
      expect(created.configOptions?.map((o) => [o.id, o.category])).toEqual([
        ['model', 'model'],
        ['mode', 'mode'],
      ])

      // 1. A plain turn: thought, message, usage, end_turn.
      const r1 = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!think planning the reply\n!say hello from chimera' }],
      })
      expect(r1.stopReason).toBe('end_turn')
      const text = (kind: string) =>
        updates
          .filter((u) => u.sessionUpdate === kind)
          .map((u) => (u as { content: { text: string } }).content.text)
          .join('')
      expect(text('agent_thought_chunk')).toBe('planning the reply')
      expect(text('agent_message_chunk')).toBe('hello from chimera')
      expect(updates.some((u) => u.sessionUpdate === 'usage_update')).toBe(true)
      expect(updates.some((u) => u.sessionUpdate === 'available_commands_update')).toBe(true)

      // 2. An edit: tool_call with a diff, permission asked with the diff, allowed, completed.
      updates.length = 0
      const r2 = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!call Write {"path":"out.txt","content":"yes\\n"}' }],
      })
      expect(r2.stopReason).toBe('end_turn')
      expect(readFileSync(join(agent.ws, 'out.txt'), 'utf8')).toBe('yes\n')
      const call = updates.find((u) => u.sessionUpdate === 'tool_call') as acp.ToolCall & { sessionUpdate: string }
      expect(call).toMatchObject({
        kind: 'edit',
        status: 'pending',
        content: [{ type: 'diff', path: join(agent.ws, 'out.txt'), oldText: null, newText: 'yes\n' }],
      })
      expect(asked).toHaveLength(1)
      expect(asked[0]!.toolCall).toMatchObject({
        toolCallId: call.toolCallId,
        content: [{ type: 'diff', newText: 'yes\n' }],
      })
      expect(asked[0]!.options.map((o) => o.kind)).toEqual([
        'allow_once',
        'allow_always',
        'reject_once',
        'reject_always',
      ])
      const statuses = updates
        .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === call.toolCallId)
        .map((u) => (u as { status?: string }).status)
      expect(statuses).toEqual(['in_progress', 'completed'])

      // 3. Cancel while a permission is pending: it is withdrawn and the prompt says cancelled.
      permission = 'hold'
      updates.length = 0
      const p3 = ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!call Write {"path":"never.txt","content":"no"}' }],
      })
      await held
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId })
      expect((await p3).stopReason).toBe('cancelled')
      expect(withdrawn).toBe(1)
      expect(existsSync(join(agent.ws, 'never.txt'))).toBe(false)

      // 4. Selectors: config options (complete list back), mode, legacy set_model.
      const set = await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: 'mode',
        value: 'plan',
      })
      expect(set.configOptions.find((o) => o.id === 'mode')).toMatchObject({ currentValue: 'plan' })
      expect(set.configOptions).toHaveLength(2)
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'build' })
      await expect(ctx.request('session/set_model', { sessionId, modelId: 'no-such-model' })).rejects.toMatchObject({
        code: -32602,
      })
      await expect(
        ctx.request(acp.methods.agent.session.setConfigOption, {
          sessionId,
          configId: 'model',
          value: 'no-such-model',
        }),
      ).rejects.toMatchObject({ code: -32602 })

      // 5. list, close, load (history replayed before the response), resume (no replay).
      const listed = await ctx.request(acp.methods.agent.session.list, { cwd: agent.ws })
      expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId)
      await ctx.request(acp.methods.agent.session.close, { sessionId })
      await expect(
        ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hi' }] }),
      ).rejects.toMatchObject({ code: -32002 })

      updates.length = 0
      const loaded = await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: agent.ws, mcpServers: [] })
      expect(loaded.modes?.currentModeId).toBe('build')
      const replayedUser = updates
        .filter((u) => u.sessionUpdate === 'user_message_chunk')
        .map((u) => (u as { content: { text: string } }).content.text)
      expect(replayedUser).toEqual([
        '!think planning the reply\n!say hello from chimera',
        '!call Write {"path":"out.txt","content":"yes\\n"}',
        '!call Write {"path":"never.txt","content":"no"}',
      ])
      expect(text('agent_message_chunk')).toContain('hello from chimera')

      updates.length = 0
      await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: agent.ws })
      const r6 = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: '!say again' }],
      })
      expect(r6.stopReason).toBe('end_turn')
      expect(updates.filter((u) => u.sessionUpdate === 'user_message_chunk')).toEqual([])
      expect(text('agent_message_chunk')).toBe('again')
    })

    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)

    // The load replay came before the load response; the cancel withdrew with $/cancel_request.
    const out = agent.frames.filter((f) => f.dir === 'out').map((f) => f.msg)
    const loadId = agent.frames.find((f) => f.dir === 'in' && f.msg.method === 'session/load')!.msg.id
    const loadResponse = out.findIndex((m) => m.id === loadId && 'result' in m)
    const lastReplay = out
      .map((m, i) => ({ m, i }))
      .filter(
        ({ m, i }) =>
          i < loadResponse && m.method === 'session/update' && m.params.update.sessionUpdate === 'user_message_chunk',
      )
    expect(lastReplay).toHaveLength(3)
    expect(out.some((m) => m.method === '$/cancel_request')).toBe(true)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
    expect(agent.stderr()).not.toMatch(/at .*\.ts:\d+/)
  }, 30_000)

  it("reads pinned files (the editor asked, its text used only when it is the file's) and writes through the client", async () => {
    const agent = startFerret('allow')
    writeFileSync(join(agent.ws, 'saved.txt'), 'buffer text\nsecond line\n')
    writeFileSync(join(agent.ws, 'unsaved.txt'), 'on disk\n')
    const buffers = new Map<string, string>([
      [join(agent.ws, 'saved.txt'), 'buffer text\nsecond line\n'],
      [join(agent.ws, 'unsaved.txt'), 'unsaved buffer\n'],
    ])
    const writes: { path: string; content: string }[] = []
    const app = acp
      .client({ name: 'test-ide' })
      .onNotification(acp.methods.client.session.update, () => {})
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        const content = buffers.get(params.path)
        if (content === undefined) throw acp.RequestError.resourceNotFound(params.path)
        return { content }
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        writes.push({ path: params.path, content: params.content })
        buffers.set(params.path, params.content)
        return {}
      })
    const outputs: string[] = []
    await app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      })
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
      for (const text of [
        '!call Read {"path":"saved.txt"}',
        '!call Edit {"path":"saved.txt","old_string":"buffer","new_string":"edited"}',
        '!call Read {"path":"../outside.txt"}',
        '!call Read {"path":"unsaved.txt"}',
      ]) {
        const r = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] })
        expect(r.stopReason).toBe('end_turn')
      }
      outputs.push(
        ...agent.frames
          .filter(
            (f) =>
              f.dir === 'out' &&
              f.msg.params?.update?.sessionUpdate === 'tool_call_update' &&
              f.msg.params.update.rawOutput,
          )
          .map((f) => JSON.stringify(f.msg.params.update.rawOutput)),
      )
    })
    // The editor agreed with the disk: read via the client, and the edit went to the editor.
    expect(outputs[0]).toContain('buffer text')
    expect(writes).toEqual([{ path: join(agent.ws, 'saved.txt'), content: 'edited text\nsecond line\n' }])
    // A path outside the workspace is refused before the client is asked.
    expect(outputs[2]).toMatch(/outside|sandbox|workspace/i)
    // The editor's differing text is never shown: the pinned disk text is, with a note.
    expect(outputs[3]).toContain('on disk')
    expect(outputs[3]).toContain('differs from the file on disk')
    expect(outputs[3]).not.toContain('unsaved buffer')
    expect(agent.frames.filter((f) => f.dir === 'out' && f.msg.method === 'fs/read_text_file')).toHaveLength(3)
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 30_000)

  it('runs Bash in the client terminal under danger-full-access only', async () => {
    const run = async (sandbox: string) => {
      const agent = startFerret('allow', ['--sandbox', sandbox, '--allow-unconfined'])
      const calls: string[] = []
      const app = acp
        .client({ name: 'test-ide' })
        .onNotification(acp.methods.client.session.update, () => {})
        .onRequest(acp.methods.client.terminal.create, ({ params }) => {
          calls.push(`create ${params.command} ${(params.args ?? []).join(' ')} in ${params.cwd}`)
          return { terminalId: 'term-1' }
        })
        .onRequest(acp.methods.client.terminal.waitForExit, () => {
          calls.push('wait')
          return { exitCode: 3, signal: null }
        })
        .onRequest(acp.methods.client.terminal.output, () => {
          calls.push('output')
          return { output: 'from the editor terminal\n', truncated: false }
        })
        .onRequest(acp.methods.client.terminal.release, () => {
          calls.push('release')
          return {}
        })
      let result = ''
      await app.connectWith(agent.stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { terminal: true } })
        const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
        await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: '!call Bash {"command":"echo local"}' }],
        })
      })
      agent.child.stdin.end()
      expect(await agent.exited).toBe(0)
      const done = agent.frames.find(
        (f) =>
          f.dir === 'out' &&
          f.msg.params?.update?.sessionUpdate === 'tool_call_update' &&
          f.msg.params.update.rawOutput,
      )
      result = JSON.stringify(done?.msg.params.update.rawOutput)
      expect(invalidAgentFrames(agent.frames)).toEqual([])
      return { calls, result, ws: agent.ws }
    }
    const full = await run('danger-full-access')
    expect(full.calls).toEqual([`create bash -c echo local in ${full.ws}`, 'wait', 'output', 'release'])
    expect(full.result).toMatch(/exited with code 3[\s\S]*from the editor terminal/)
    const confined = await run('workspace-write')
    expect(confined.calls).toEqual([])
    expect(confined.result).toContain('local')
  }, 30_000)

  it('serves the _chimera and _ferret extensions to an SDK client that asks for ferret updates', async () => {
    const agent = startFerret('allow')
    const updates: Update[] = []
    const ferret: FerretSessionUpdateParams[] = []
    const app = acp
      .client({ name: 'test-ide' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        updates.push(params.update)
      })
      .onNotification('_ferret/session/update', FerretSessionUpdateParamsSchema, ({ params }) => {
        ferret.push(params)
      })
    await app.connectWith(agent.stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: { _meta: { 'ferret/updates': true } },
      })
      expect(init.agentCapabilities?._meta).toEqual({
        'chimera/extensions': [
          '_chimera/session/replay',
          '_chimera/session/state',
          '_chimera/session/compact',
          '_ferret/session/setSandbox',
          '_ferret/session/setApproval',
          '_ferret/session/bridgeStatus',
        ],
        'ferret/updates': true,
      })
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: agent.ws, mcpServers: [] })
      await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!say one' }] })
      updates.length = 0
      const replay = await ctx.request<{ replayed: number; lastEventId: number; truncated: boolean }>(
        '_chimera/session/replay',
        { sessionId, sinceEventId: 0 },
      )
      // The replayed updates reached the client's handler before the response resolved.
      expect(updates.map((u) => u.sessionUpdate)).toEqual([
        'user_message_chunk',
        'session_info_update',
        'agent_message_chunk',
        'usage_update',
      ])
      expect(replay).toMatchObject({
        replayed: 4,
        truncated: false,
        lastEventId: updates.at(-1)!._meta!['chimera/eventId'],
      })
      const state = await ctx.request<{
        status: string
        messages: { role: string; content: string }[]
        lastEventId: number
      }>('_chimera/session/state', { sessionId })
      expect(state).toMatchObject({
        status: 'idle',
        messages: [
          { role: 'user', content: '!say one' },
          { role: 'assistant', content: 'one' },
        ],
      })
      expect(state.lastEventId).toBeGreaterThanOrEqual(replay.lastEventId)
      expect(await ctx.request('_ferret/session/setApproval', { sessionId, approval: 'ask' })).toEqual({
        old: 'allow',
        new: 'ask',
      })
      expect(await ctx.request('_ferret/session/bridgeStatus', { sessionId })).toEqual({
        attached: false,
        reason: NO_BRIDGE,
      })
      await expect(ctx.request('_chimera/session/compact', { sessionId: 'nope' })).rejects.toMatchObject({
        code: -32002,
      })
      expect(await ctx.request('_chimera/session/compact', { sessionId })).toMatchObject({
        messagesBefore: 2,
        messagesAfter: 1,
      })
      // A later prompt's response follows every update before it, the approval change included.
      await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!say two' }] })
      expect(ferret).toEqual([
        { sessionId, eventId: expect.any(Number), kind: 'approval_changed', data: { old: 'allow', new: 'ask' } },
      ])
    })
    agent.child.stdin.end()
    expect(await agent.exited).toBe(0)
    expect(invalidAgentFrames(agent.frames)).toEqual([])
  }, 30_000)
})
