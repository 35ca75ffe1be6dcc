/**
 * The ACP server in process (real streams, real session manager): an internal failure is
 * -32000 `{name, message}` on the seed wire and a masked -32603 on v1, never a stack (the stack
 * goes to the log); prompts to different sessions run in parallel (one blocked on a permission
 * does not hold the other); a second session/message queues behind the first; the v1
 * extensions: `_ferret/session/update` only for a client that asked, a replay during a turn.
 */
import { writeFileSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import { MAX_HANDLING } from '../jsonrpc/connection.ts'
import { startAcp } from './fixtures/in-process.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-acp-')
})
afterEach(async () => {
  await env.cleanup()
})

const start = startAcp

describe('ACP internal errors', () => {
  it('are -32000 {name, message} on the seed wire, with the stack only in the log', async () => {
    const manager = env.manager()
    manager.listSessions = async () => {
      throw new TypeError('the disk is on fire')
    }
    const s = start('otter', manager)
    await s.call('initialize', {})
    const r = await s.call('session/list', {})
    expect(r.error).toEqual({
      code: -32000,
      message: 'Agent error',
      data: { name: 'TypeError', message: 'the disk is on fire' },
    })
    expect(JSON.stringify(s.frames)).not.toMatch(/\bat .*:\d+:\d+/)
    expect(s.log.join('\n')).toMatch(/the disk is on fire[\s\S]*at /)
    s.input.end()
    await s.done
  })

  it('are a masked -32603 on ACP v1', async () => {
    const manager = env.manager()
    manager.listSessions = async () => {
      throw new TypeError('the disk is on fire')
    }
    const s = start('ferret', manager)
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const r = await s.call('session/list', {})
    expect(r.error).toEqual({ code: -32603, message: 'Internal error' })
    s.input.end()
    await s.done
  })
})

describe('ACP concurrency', () => {
  it('runs prompts to different sessions in parallel', async () => {
    const s = start('ferret', env.manager({ approval: 'ask' }))
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const a = (await s.call('session/new', { cwd: env.cwd, mcpServers: [] })).result.sessionId
    const b = (await s.call('session/new', { cwd: env.cwd, mcpServers: [] })).result.sessionId
    s.send({
      jsonrpc: '2.0',
      id: 'pa',
      method: 'session/prompt',
      params: { sessionId: a, prompt: [{ type: 'text', text: '!call Write {"path":"x.txt","content":"x"}' }] },
    })
    const ask = await s.waitFor(
      (m) => m.method === 'session/request_permission' && m.params.sessionId === a,
      'the permission request',
    )
    // Session a is blocked on its permission; session b's turn runs to the end meanwhile.
    const rb = await s.call('session/prompt', { sessionId: b, prompt: [{ type: 'text', text: '!say b done' }] })
    expect(rb.result).toEqual({ stopReason: 'end_turn' })
    expect(s.frames.some((m) => m.id === 'pa')).toBe(false)
    s.send({ jsonrpc: '2.0', id: ask.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } })
    const ra = await s.waitFor((m) => m.id === 'pa', 'the first prompt')
    expect(ra.result).toEqual({ stopReason: 'end_turn' })
    s.input.end()
    await s.done
  })

  it('queues a second session/message behind the running one (seed)', async () => {
    const s = start('otter', env.manager())
    await s.call('initialize', {})
    const sid = (await s.call('session/new', {})).result.sessionId
    s.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'session/message',
      params: { sessionId: sid, prompt: '!sleep 100\n!say one' },
    })
    s.send({ jsonrpc: '2.0', id: 2, method: 'session/message', params: { sessionId: sid, prompt: '!say two' } })
    const second = await s.waitFor((m) => m.id === 2, 'the second reply')
    const order = s.frames.filter((m) => m.id === 1 || m.id === 2).map((m) => m.id)
    expect(order).toEqual([1, 2])
    expect(second.result.message.content.text).toBe('two')
    s.input.end()
    await s.done
  })

  it('ends cleanly when the input closes while a permission is pending: denied, turn finished', async () => {
    const manager = env.manager({ approval: 'ask' })
    const s = start('ferret', manager)
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const sid = (await s.call('session/new', { cwd: env.cwd, mcpServers: [] })).result.sessionId
    s.send({
      jsonrpc: '2.0',
      id: 'p',
      method: 'session/prompt',
      params: { sessionId: sid, prompt: [{ type: 'text', text: '!call Write {"path":"y.txt","content":"y"}' }] },
    })
    await s.waitFor((m) => m.method === 'session/request_permission', 'the permission request')
    s.input.end()
    await within(s.done, 8000, 'the server to finish')
    expect(s.frames.find((m) => m.id === 'p')?.result).toEqual({ stopReason: 'end_turn' })
    const events = await (await manager.get(sid)).events()
    expect(events.find((e) => e.type === 'permission_reply')?.data).toMatchObject({ decision: 'deny' })
    expect(events.at(-1)?.type).toBe('agent_result')
  })

  it('stops reading requests from a client that stops reading its answers, and answers them all later', async () => {
    const manager = env.manager()
    // Count the requests handled (each session/list is one manager.listSessions call).
    let handled = 0
    const list = manager.listSessions.bind(manager)
    manager.listSessions = (...a: Parameters<typeof list>) => {
      handled++
      return list(...a)
    }
    const output = new PassThrough({ highWaterMark: 4096 })
    const s = start('ferret', manager, output)
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    output.pause()
    const N = 5_000
    for (let i = 0; i < N; i++)
      s.input.write(`${JSON.stringify({ jsonrpc: '2.0', id: `l${i}`, method: 'session/list', params: {} })}\n`)
    // The gate: the output is full (nobody reads it), then a few turns of the event loop.
    await within(
      new Promise<void>((resolve) => {
        const check = (): void =>
          output.writableLength + output.readableLength >= 4096 ? resolve() : void setTimeout(check, 5)
        check()
      }),
      8000,
      'the output to fill',
    )
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r))
    // Reading stopped with the output full: at most MAX_HANDLING in hand plus what filled the
    // output were handled, not 5,000 answers queued.
    expect(handled).toBeLessThan(2 * MAX_HANDLING)
    expect(output.writableLength + output.readableLength).toBeLessThan(64 * 1024)
    output.resume()
    await s.waitFor((m) => m.id === `l${N - 1}`, 'the last answer')
    expect(s.frames.filter((m) => typeof m.id === 'string' && m.id.startsWith('l') && m.result)).toHaveLength(N)
    s.input.end()
    await s.done
  }, 60_000)

  it('holds a client that stops reading in bounded memory and loses no update', async () => {
    const manager = env.manager()
    const output = new PassThrough({ highWaterMark: 4096 })
    const s = start('ferret', manager, output)
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const sid = (await s.call('session/new', { cwd: env.cwd, mcpServers: [] })).result.sessionId
    const words = Array.from({ length: 40000 }, (_, i) => `w${i}`).join(' ')
    output.pause()
    s.send({
      jsonrpc: '2.0',
      id: 'big',
      method: 'session/prompt',
      params: { sessionId: sid, prompt: [{ type: 'text', text: `!say ${words}` }] },
    })
    const session = await manager.get(sid)
    await within(session.idle(), 8000, 'the turn (it runs although nobody reads)')
    // The writer waits for drain: what sits in the stream's buffers stays near its limits.
    expect(output.writableLength + output.readableLength).toBeLessThan(64 * 1024)
    output.resume()
    await s.waitFor((m) => m.id === 'big', 'the prompt response')
    const text = s.frames
      .filter((m) => m.params?.update?.sessionUpdate === 'agent_message_chunk')
      .map((m) => m.params.update.content.text)
      .join('')
    expect(text).toBe(words)
    // Enough updates that, unbounded, they would have overflowed the limit above many times.
    expect(JSON.stringify(s.frames).length).toBeGreaterThan(256 * 1024)
    s.input.end()
    await s.done
  })
})

describe('ACP session/new working directory', () => {
  it('refuses a cwd that does not exist (or is a file) with -32602 on both wires, as HTTP does', async () => {
    for (const [agent, init] of [
      ['otter', { protocolVersion: 1, clientCapabilities: {} }],
      ['otter', {}],
    ] as const) {
      const manager = env.manager()
      const s = start(agent, manager)
      await s.call('initialize', init)
      for (const cwd of [`${env.cwd}/missing`, `${env.base}/file.txt`]) {
        writeFileSync(`${env.base}/file.txt`, 'x')
        const r = await s.call('session/new', { cwd, mcpServers: [] })
        expect(r.error, cwd).toMatchObject({
          code: -32602,
          data: { issues: [{ path: 'cwd', message: 'is not an existing directory' }] },
        })
      }
      expect(await manager.list()).toEqual([])
      s.input.end()
      await s.done
    }
  })
})

describe('ACP v1 extensions', () => {
  it('sends _ferret/session/update only to the client that advertised ferret/updates', async () => {
    const manager = env.manager()
    const asking = start('ferret', manager)
    const plain = start('ferret', manager)
    await asking.call('initialize', { protocolVersion: 1, clientCapabilities: { _meta: { 'ferret/updates': true } } })
    await plain.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const sid = (await asking.call('session/new', { cwd: env.cwd, mcpServers: [] })).result.sessionId
    expect((await plain.call('session/resume', { sessionId: sid, cwd: env.cwd })).result).toBeDefined()
    const r = await plain.call('_ferret/session/setApproval', { sessionId: sid, approval: 'deny' })
    expect(r.result).toEqual({ old: 'allow', new: 'deny' })
    const update = await asking.waitFor((m) => m.method === '_ferret/session/update', 'the ferret update')
    expect(update.params).toEqual({
      sessionId: sid,
      eventId: expect.any(Number),
      kind: 'approval_changed',
      data: { old: 'allow', new: 'deny' },
    })
    // Both pumps have written the event (a later prompt's response follows its updates).
    expect(
      (await plain.call('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: '!say after' }] })).result,
    ).toEqual({ stopReason: 'end_turn' })
    expect(plain.frames.filter((m) => m.method === '_ferret/session/update')).toEqual([])
    expect(asking.frames.filter((m) => m.method === '_ferret/session/update')).toHaveLength(1)
    asking.input.end()
    plain.input.end()
    await Promise.all([asking.done, plain.done])
  })

  it('replays during a held turn: updates before the response, then the turn goes on with nothing missed or doubled', async () => {
    const manager = env.manager({ approval: 'ask' })
    const s = start('ferret', manager)
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const sid = (await s.call('session/new', { cwd: env.cwd, mcpServers: [] })).result.sessionId
    await s.call('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: '!say first' }] })
    s.send({
      jsonrpc: '2.0',
      id: 'held',
      method: 'session/prompt',
      params: {
        sessionId: sid,
        prompt: [{ type: 'text', text: '!say writing\n!call Write {"path":"z.txt","content":"z"}' }],
      },
    })
    const ask = await s.waitFor((m) => m.method === 'session/request_permission', 'the permission request')
    const before = s.frames.length
    const r = await s.call('_chimera/session/replay', { sessionId: sid })
    const replayFrames = s.frames.slice(before).filter((m) => m.method === 'session/update')
    const responseAt = s.frames.indexOf(r)
    // Every replayed update precedes the response.
    expect(s.frames.slice(before, responseAt).filter((m) => m.method === 'session/update')).toHaveLength(
      r.result.replayed,
    )
    expect(replayFrames.length).toBe(r.result.replayed)
    const ids = replayFrames.map((m) => m.params.update._meta['chimera/eventId'] as number)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(r.result).toMatchObject({ sessionId: sid, truncated: false, lastEventId: ids.at(-1) })
    expect(replayFrames.map((m) => m.params.update.sessionUpdate)).toEqual([
      'user_message_chunk',
      'session_info_update',
      'agent_message_chunk',
      'usage_update',
      'user_message_chunk',
      'agent_message_chunk',
      'usage_update',
      'tool_call',
    ])
    s.send({ jsonrpc: '2.0', id: ask.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } })
    expect((await s.waitFor((m) => m.id === 'held', 'the held prompt')).result).toEqual({ stopReason: 'end_turn' })
    // The live stream goes on after the replay from the next event: nothing written twice, no gap.
    const eventId = (m: Record<string, any>) => m.params.update._meta?.['chimera/eventId'] as number | undefined
    const live = s.frames.filter(
      (m, i) => m.method === 'session/update' && (i < before || i > responseAt) && eventId(m) !== undefined,
    )
    const liveKeys = live.map((m) => `${eventId(m)}:${m.params.update.sessionUpdate}`)
    expect(new Set(liveKeys).size).toBe(liveKeys.length)
    const after = s.frames
      .slice(responseAt + 1)
      .filter((m) => m.method === 'session/update' && eventId(m) !== undefined)
      .map((m) => eventId(m)!)
    expect(after.length).toBeGreaterThan(0)
    expect(Math.min(...after)).toBeGreaterThan(r.result.lastEventId)
    // ...and together the live updates are the whole history (a full replay), less the client's own prompts.
    const mark = s.frames.length
    await s.call('_chimera/session/replay', { sessionId: sid })
    const full = s.frames
      .slice(mark)
      .filter((m) => m.method === 'session/update' && m.params.update.sessionUpdate !== 'user_message_chunk')
    expect(
      liveKeys.filter((k) => !k.endsWith(':user_message_chunk') && !k.endsWith(':available_commands_update')),
    ).toEqual(full.map((m) => `${eventId(m)}:${m.params.update.sessionUpdate}`))
    s.input.end()
    await s.done
  })
})
