/**
 * An acknowledged steer is durable, through the real CLI: ACP's `_session/steering` answers
 * `injected` once the message's queue entry is on disk. SIGKILL after the acknowledgement
 * and before the turn takes the message: a restarted session closes the interrupted turn and
 * then the steer, with its text as a `user_message` and a turn that ends in an error saying it
 * never reached the model. A steer the turn took is in the log as a `steering` event carrying
 * its message id, and leaves no queue entry behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { FileEventStore } from '../store/file-store.ts'

const temp = tempDirs()
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})
afterAll(() => temp.cleanup())

interface Rpc {
  child: ChildProcess
  exit: Promise<unknown>
  send(cmd: Record<string, unknown>): void
  response(id: string): Promise<{ success: boolean; error: string }>
}

function rpc(home: string, cwd: string, extra: string[] = []): Rpc {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'code', '--mode', 'rpc', '--cwd', cwd, ...extra], {
    env: { ...process.env, CHIMERA_HOME: home },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  let out = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d))
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exit = new Promise((r) => child.on('exit', r))
  return {
    child,
    exit,
    send: (cmd) => child.stdin!.write(`${JSON.stringify(cmd)}\n`),
    async response(id) {
      for (let i = 0; i < 400; i++) {
        for (const line of out.split('\n')) {
          if (!line.includes('"response"')) continue
          const m = JSON.parse(line) as { type: string; id?: string; success: boolean; error: string }
          if (m.type === 'response' && m.id === id) return m
        }
        if (child.exitCode !== null) break
        await new Promise((r) => setTimeout(r, 50))
      }
      throw new Error(`no response ${id}; stdout=${out.slice(-400)} stderr=${err.slice(-400)}`)
    },
  }
}

/** `otter serve --acp` on stdio, driven with raw JSON-RPC lines. */
function acp(home: string): {
  child: ChildProcess
  exit: Promise<unknown>
  call(method: string, params: unknown): Promise<unknown>
} {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--acp'], {
    env: { ...process.env, CHIMERA_HOME: home },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  const exit = new Promise((r) => child.on('exit', r))
  const waiting = new Map<number, (v: unknown) => void>()
  let buf = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d
    let nl: number
    while ((nl = buf.indexOf('\n')) >= 0) {
      const m = JSON.parse(buf.slice(0, nl)) as { id?: number; result?: unknown; error?: unknown; method?: string }
      buf = buf.slice(nl + 1)
      if (m.method === undefined && typeof m.id === 'number') waiting.get(m.id)?.(m.error ?? m.result)
    }
  })
  let next = 0
  return {
    child,
    exit,
    call(method, params) {
      const id = next++
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
      return new Promise((r) => waiting.set(id, r))
    },
  }
}

/** The one session's directory name and a store over CHIMERA_HOME. */
function stored(home: string): { id: string; store: FileEventStore; dir: string } {
  const root = join(home, 'eventlog')
  const [id] = readdirSync(root).filter((n) => n.startsWith('otter-'))
  return { id: id!, store: new FileEventStore({ root }), dir: join(root, id!) }
}

/**
 * The session's event files as they are, read without a store: a store opened on a live session
 * repairs its log, and would set aside an event file the server has created but not yet written.
 */
function liveEvents(home: string): AnyEvent[] {
  const root = join(home, 'eventlog')
  const [id] = readdirSync(root).filter((n) => n.startsWith('otter-'))
  if (!id) return []
  const out: AnyEvent[] = []
  for (const name of readdirSync(join(root, id))) {
    if (!/^event-\d+-[a-z_]+\.json$/.test(name)) continue
    try {
      out.push(JSON.parse(readFileSync(join(root, id, name), 'utf8')) as AnyEvent)
    } catch {
      // being written
    }
  }
  return out
}

async function waitForEvent(home: string, pred: (e: AnyEvent) => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    try {
      if (liveEvents(home).some(pred)) return
    } catch {
      // not created yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('timed out waiting for an event')
}

const queueFiles = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('queued-'))

describe('an acknowledged steer survives the process', () => {
  it('SIGKILL after the steer was acknowledged (ACP `_session/steering`): the restarted session closes it as not run, with its text', async () => {
    const home = temp.make('steer-kill-')
    const cwd = temp.make('steer-ws-')
    const a = acp(home)
    await a.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const { sessionId } = (await a.call('session/new', { cwd, mcpServers: [] })) as { sessionId: string }
    void a.call('session/prompt', { sessionId, prompt: [{ type: 'text', text: '!sleep 60000\n!say never' }] })
    await waitForEvent(home, (e) => e.type === 'step_start')
    const steered = await a.call('_session/steering', {
      sessionId,
      prompt: [{ type: 'text', text: '!say steered before the crash' }],
    })
    expect(steered).toEqual({ outcome: 'injected' })
    // Acknowledged: its entry is on disk.
    expect(queueFiles(stored(home).dir)).toHaveLength(1)
    a.child.kill('SIGKILL')
    await a.exit

    const { id, store, dir } = stored(home)
    expect(id).toBe(sessionId)
    const b = rpc(home, cwd, ['--session', id])
    b.send({ type: 'prompt', id: 'after', message: '!say after the crash' })
    expect(await b.response('after')).toMatchObject({ success: true })
    b.child.stdin!.end()
    await b.exit

    const events = await store.read(id)
    const users = events.filter((e) => e.type === 'user_message').map((e) => e.data.text)
    expect(users).toEqual(['!sleep 60000\n!say never', '!say steered before the crash', '!say after the crash'])
    const errors = events.filter((e) => e.type === 'error').map((e) => e.data.message)
    expect(errors).toEqual([
      'the turn was interrupted: the process stopped before it finished',
      'not run: the process stopped before this steering message reached the model',
    ])
    expect(queueFiles(dir)).toEqual([])
  }, 60_000)

  it('a steer the turn took is a `steering` event with its message id, and no queue entry is left', async () => {
    const home = temp.make('steer-taken-')
    const cwd = temp.make('steer-ws-')
    const a = rpc(home, cwd)
    a.send({ type: 'prompt', id: 'p', message: '!sleep 1500\n!say first' })
    await waitForEvent(home, (e) => e.type === 'step_start')
    a.send({ type: 'steer', id: 's', message: '!say steered' })
    expect(await a.response('s')).toMatchObject({ success: true })
    expect(await a.response('p')).toMatchObject({ success: true })
    a.child.stdin!.end()
    await a.exit
    const { id, store, dir } = stored(home)
    const steering = (await store.read(id)).filter((e) => e.type === 'steering')
    expect(steering).toHaveLength(1)
    expect(steering[0]!.data).toEqual({ text: '!say steered', message_id: expect.stringMatching(/^msg-/) as string })
    expect(queueFiles(dir)).toEqual([])
  }, 60_000)
})
