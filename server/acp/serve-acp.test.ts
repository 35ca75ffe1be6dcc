/**
 * The ACP server in process (real streams, real session manager): an internal failure is
 * -32000 `{name, message}` on the seed wire and a masked -32603 on v1, never a stack (the stack
 * goes to the log); prompts to different sessions run in parallel (one blocked on a permission
 * does not hold the other); a second session/message queues behind the first.
 */
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import type { SessionManager } from '../core/manager.ts'
import { createLogger } from '../log.ts'
import { serveAcp } from './serve-acp.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-acp-')
})
afterEach(async () => {
  await env.cleanup()
})

function start(agent: 'otter' | 'ferret', manager: SessionManager, output = new PassThrough()) {
  const input = new PassThrough()
  const log: string[] = []
  const frames: Record<string, any>[] = []
  const waiters: (() => void)[] = []
  let buf = ''
  output.setEncoding('utf8').on('data', (d: string) => {
    buf += d
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      frames.push(JSON.parse(buf.slice(0, i)))
      buf = buf.slice(i + 1)
    }
    for (const w of waiters.splice(0)) w()
  })
  const done = serveAcp({ agent, version: '0.0.0', input, output, logger: createLogger({ level: 'debug', sink: (l) => void log.push(l) }), manager })
  const waitFor = (pred: (m: Record<string, any>) => boolean, what: string) =>
    within(
      new Promise<Record<string, any>>((resolve) => {
        const check = (): void => {
          const m = frames.find(pred)
          if (m) resolve(m)
          else waiters.push(check)
        }
        check()
      }),
      8000,
      what,
    )
  let id = 100
  const call = async (method: string, params: unknown) => {
    const n = id++
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params })}\n`)
    return waitFor((m) => m.id === n && !('method' in m), `${method} response`)
  }
  const send = (m: unknown) => input.write(`${JSON.stringify(m)}\n`)
  return { input, frames, log, done, call, send, waitFor }
}

describe('ACP internal errors', () => {
  it('are -32000 {name, message} on the seed wire, with the stack only in the log', async () => {
    const manager = env.manager()
    manager.list = async () => {
      throw new TypeError('the disk is on fire')
    }
    const s = start('otter', manager)
    await s.call('initialize', {})
    const r = await s.call('session/list', {})
    expect(r.error).toEqual({ code: -32000, message: 'Agent error', data: { name: 'TypeError', message: 'the disk is on fire' } })
    expect(JSON.stringify(s.frames)).not.toMatch(/\bat .*:\d+:\d+/)
    expect(s.log.join('\n')).toMatch(/the disk is on fire[\s\S]*at /)
    s.input.end()
    await s.done
  })

  it('are a masked -32603 on ACP v1', async () => {
    const manager = env.manager()
    manager.list = async () => {
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
    s.send({ jsonrpc: '2.0', id: 'pa', method: 'session/prompt', params: { sessionId: a, prompt: [{ type: 'text', text: '!call Write {"path":"x.txt","content":"x"}' }] } })
    const ask = await s.waitFor((m) => m.method === 'session/request_permission' && m.params.sessionId === a, 'the permission request')
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
    s.send({ jsonrpc: '2.0', id: 1, method: 'session/message', params: { sessionId: sid, prompt: '!sleep 100\n!say one' } })
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
    s.send({ jsonrpc: '2.0', id: 'p', method: 'session/prompt', params: { sessionId: sid, prompt: [{ type: 'text', text: '!call Write {"path":"y.txt","content":"y"}' }] } })
    await s.waitFor((m) => m.method === 'session/request_permission', 'the permission request')
    s.input.end()
    await within(s.done, 8000, 'the server to finish')
    expect(s.frames.find((m) => m.id === 'p')?.result).toEqual({ stopReason: 'end_turn' })
    const events = await (await manager.get(sid)).events()
    expect(events.find((e) => e.type === 'permission_reply')?.data).toMatchObject({ decision: 'deny' })
    expect(events.at(-1)?.type).toBe('agent_result')
  })

  it('holds a client that stops reading in bounded memory and loses no update', async () => {
    const manager = env.manager()
    const output = new PassThrough({ highWaterMark: 4096 })
    const s = start('ferret', manager, output)
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const sid = (await s.call('session/new', { cwd: env.cwd, mcpServers: [] })).result.sessionId
    const words = Array.from({ length: 40000 }, (_, i) => `w${i}`).join(' ')
    output.pause()
    s.send({ jsonrpc: '2.0', id: 'big', method: 'session/prompt', params: { sessionId: sid, prompt: [{ type: 'text', text: `!say ${words}` }] } })
    const session = await manager.get(sid)
    await within(session.idle(), 8000, 'the turn (it runs although nobody reads)')
    // The writer waits for drain: what sits in the stream's buffers stays near its limits.
    expect(output.writableLength + output.readableLength).toBeLessThan(64 * 1024)
    output.resume()
    await s.waitFor((m) => m.id === 'big', 'the prompt response')
    const text = s.frames.filter((m) => m.params?.update?.sessionUpdate === 'agent_message_chunk').map((m) => m.params.update.content.text).join('')
    expect(text).toBe(words)
    // Enough updates that, unbounded, they would have overflowed the limit above many times.
    expect(JSON.stringify(s.frames).length).toBeGreaterThan(256 * 1024)
    s.input.end()
    await s.done
  })
})
