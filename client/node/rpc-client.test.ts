/**
 * The JSON-lines RPC client against the real `chimera code --mode rpc` (the bundled CLI, offline
 * model), every message on the wire checked by the conformance sniffer.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { RpcSniffer } from '../../conformance/harness/sniffer.ts'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { ChimeraClientError } from '../errors.ts'
import { spawnRpcClient, type RpcClient, type RpcEvent } from './rpc-client.ts'

const dirs = tempDirs()
const clients: RpcClient[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.kill()))
  dirs.cleanup()
})

function start(args: string[] = []): { rpc: RpcClient; sniffer: RpcSniffer; cwd: string } {
  const cwd = dirs.make('chimera-rpc-client-')
  const sniffer = new RpcSniffer()
  const rpc = spawnRpcClient({
    command: [process.execPath, CLI_BUNDLE, 'code', '--mode', 'rpc', '--cwd', cwd, ...args],
    onWire: (dir, m) => sniffer.frame(dir, m),
  })
  clients.push(rpc)
  return { rpc, sniffer, cwd }
}

describe('RPC client over `chimera code --mode rpc`', () => {
  it('runs a turn: streamed message events, then the prompt resolves; get_state holds the history; close exits 0', async () => {
    const { rpc, sniffer } = start()
    const seen: Extract<RpcEvent, { type: 'message' }>[] = []
    const off = rpc.on('message', (m) => seen.push(m))
    const response = await rpc.prompt('!say hello there')
    expect(response).toMatchObject({ command: 'prompt', success: true })
    expect(
      seen
        .filter((m) => !m.done)
        .map((m) => m.content)
        .join(''),
    ).toBe('hello there')
    expect(seen.at(-1)).toMatchObject({ type: 'message', role: 'assistant', content: 'hello there', done: true })
    off()
    const state = await rpc.getState()
    expect(state.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(state.model).toBe('offline')
    expect(await rpc.close()).toBe(0)
    expect(sniffer.violations).toEqual([])
  })

  it('answers a permission request (--approval ask) and the tool runs', async () => {
    const { rpc, sniffer, cwd } = start(['--approval', 'ask'])
    const events: RpcEvent[] = []
    const replies: Promise<unknown>[] = []
    const iterate = (async () => {
      for await (const ev of rpc.events()) {
        events.push(ev)
        // Its acknowledgement comes after the prompt's (replies keep command order): do not wait for it here.
        if (ev.type === 'permission_request') replies.push(rpc.permissionReply(ev.request_id, 'allow'))
      }
    })()
    await rpc.prompt('!call Write {"path":"out.txt","content":"yes"}')
    expect(readFileSync(join(cwd, 'out.txt'), 'utf8')).toBe('yes')
    await Promise.all(replies)
    await rpc.close()
    await iterate // the iterator ends when the process exits
    expect(
      events
        .map((e) => (e.type === 'tool_execution' ? `${e.type}:${e.status}` : e.type))
        .filter((t) => t !== 'message'),
    ).toEqual(['permission_request', 'tool_execution:started', 'tool_execution:completed'])
    expect(sniffer.violations).toEqual([])
  })

  it('a failed command rejects with command_failed; an invalid one is refused before it is written', async () => {
    const { rpc } = start()
    await expect(rpc.setModel('no-such-model')).rejects.toSatisfy(
      (e) => ChimeraClientError.is(e, 'command_failed') && /unknown model/.test((e as Error).message),
    )
    await expect(rpc.send({ type: 'set_model', model: '' })).rejects.toThrow(TypeError)
    await expect(rpc.steer('nothing runs')).rejects.toSatisfy((e) => ChimeraClientError.is(e, 'command_failed'))
    await rpc.close()
  })

  it("aborting a prompt's signal cancels the turn (its response then fails: the turn was cancelled)", async () => {
    const { rpc } = start()
    const ctl = new AbortController()
    const started = new Promise<void>((resolve) => rpc.on('message', () => resolve()))
    const turn = rpc.prompt('!say waiting\n!sleep 60000\n!say never', { signal: ctl.signal })
    await started
    ctl.abort()
    await expect(turn).rejects.toSatisfy(
      (e) => ChimeraClientError.is(e, 'command_failed') && /cancelled/.test((e as Error).message),
    )
    const state = await rpc.getState()
    expect(state.messages.at(-1)?.content ?? '').not.toContain('never')
    await rpc.close()
  })

  it('pending commands and iterators end with a closed error when the process dies', async () => {
    const { rpc } = start()
    const turn = rpc.prompt('!sleep 60000')
    const iterate = (async () => {
      for await (const _ of rpc.events()) void _
    })()
    await rpc.kill()
    await expect(turn).rejects.toSatisfy((e) => ChimeraClientError.is(e, 'closed'))
    await iterate
    await expect(rpc.cancel()).rejects.toSatisfy((e) => ChimeraClientError.is(e, 'closed'))
  })

  it('a missing program is a closed error, not a crash', async () => {
    const rpc = spawnRpcClient({ command: [join(dirs.make('chimera-none-'), 'no-such-chimera')] })
    expect(await rpc.exited).toBe(null)
    await expect(rpc.prompt('hi')).rejects.toSatisfy((e) => ChimeraClientError.is(e, 'closed'))
    expect(existsSync(CLI_BUNDLE)).toBe(true)
  })
})
