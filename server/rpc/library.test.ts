/**
 * The RPC mode as a library, without the CLI: RpcServer + handlers over in-memory streams, and
 * runRpc leaving a complete event log behind when input ends.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { noopLogger } from '../log.ts'
import { SessionManager } from '../core/manager.ts'
import { EventPump, RpcServer, createRpcHandlers, runRpc, type RpcHandlers } from './index.ts'
import { offlineModels } from '../providers/registry.ts'

const temp = tempDirs()
const tmp = (prefix: string) => temp.make(prefix)
afterEach(() => temp.cleanup())

function collect(out: PassThrough): () => Record<string, unknown>[] {
  let buf = ''
  out.on('data', (d: Buffer) => (buf += d.toString()))
  return () =>
    buf
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
}

describe('RpcServer as a library', () => {
  it('dispatches to a handlers map, acknowledges every command in the order received, and returns at EOF', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const lines = collect(output)
    const server = new RpcServer({ input, output, logger: noopLogger })
    const seen: string[] = []
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const handlers: RpcHandlers = {
      // The first command finishes last: its work is held until the others have run.
      set_model: async (cmd) => {
        seen.push(`set_model:${cmd.model}`)
        await gate
      },
      get_state: async (cmd, ctx) => {
        seen.push(`get_state:${cmd.id}`)
        ctx.reply({ type: 'state', id: cmd.id ?? null, messages: [], model: 'm' })
        release()
      },
    }
    server.setHandlers(handlers)
    const done = server.run()
    input.write('{"type":"set_model","id":1,"model":"x"}\n{"type":"get_state","id":2}\n{"type":"compact","id":3}\n')
    input.end()
    await done
    // Work starts as commands are read: get_state ran while set_model was still waiting.
    expect(seen).toEqual(['set_model:x', 'get_state:2'])
    // Replies come in command order, each reply before its acknowledgement.
    expect(lines()).toEqual([
      { type: 'response', command: 'set_model', id: 1, success: true, error: '' },
      { type: 'state', id: 2, messages: [], model: 'm' },
      { type: 'response', command: 'get_state', id: 2, success: true, error: '' },
      {
        type: 'response',
        command: 'compact',
        id: 3,
        success: false,
        error: 'command "compact" is not available in this build',
      },
    ])
  })
})

describe('runRpc', () => {
  it('drives a real session; at end of input the turn finishes and the event log is complete', async () => {
    const home = tmp('rpc-home-')
    const cwd = tmp('rpc-ws-')
    const input = new PassThrough()
    const output = new PassThrough()
    const lines = collect(output)
    const running = runRpc({ input, output, logger: noopLogger, cwd, home })
    input.end('{"type":"prompt","id":"p","message":"!say done"}\n')
    const session = await running
    expect(lines().at(-1)).toEqual({ type: 'response', command: 'prompt', id: 'p', success: true, error: '' })
    const dir = join(home, 'eventlog', session.id)
    const files = readdirSync(dir)
      .filter((f) => f.startsWith('event-'))
      .sort()
    expect(files.length).toBe(session.lastSeq)
    expect(files.at(-1)).toMatch(/^event-\d{6}-(agent_result|approval_changed)\.json$/)
    expect(files.some((f) => f.endsWith('-agent_result.json'))).toBe(true)
  })
})

describe('the two halves (docs/rpc.md "As a library")', () => {
  it('with an EventPump, a prompt streams its events before its acknowledgement', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const lines = collect(output)
    const manager = new SessionManager({
      agent: 'otter',
      cwd: tmp('rpc-ws-'),
      home: tmp('rpc-home-'),
      logger: noopLogger,
      models: offlineModels(),
    })
    const mine = await manager.create()
    const server = new RpcServer({ input, output, logger: noopLogger })
    const pump = new EventPump(mine, server, noopLogger)
    server.setHandlers({ ...createRpcHandlers(mine, (seq) => pump.delivered(seq)) })
    const done = server.run()
    input.end('{"type":"prompt","id":"p","message":"!say two halves"}\n')
    await done
    await mine.idle()
    await pump.delivered(mine.lastSeq)
    await pump.stop()
    const all = lines()
    const ack = all.findIndex((l) => l.type === 'response')
    expect(all.slice(0, ack)).toContainEqual({ type: 'message', role: 'assistant', content: 'two halves', done: true })
    expect(all[ack]).toEqual({ type: 'response', command: 'prompt', id: 'p', success: true, error: '' })
  })
})
