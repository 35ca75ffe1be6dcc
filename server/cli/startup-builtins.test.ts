/**
 * The built CLI answers ACP `session/new` and RPC `get_state` before it loads the Node built-ins
 * that only later work needs (docs/decisions/0465-built-ins-after-the-answer.md): `node:crypto`
 * (ids come from server/platform/random.ts), `node:zlib` (the segment's CRC-32), `perf_hooks`,
 * `worker_threads` (Node 24 loads it with an ESM import of `node:util`) and `child_process`.
 * A child run with a preload records the built-ins loaded at each of its stdout writes.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { cliProcesses, type Proc } from './fixtures/cli-process.ts'

const { startNode, temp } = cliProcesses()
const PRELOAD = fileURLToPath(new URL('./fixtures/builtins-at-answer.mjs', import.meta.url))
const LATER = ['crypto', 'zlib', 'perf_hooks', 'worker_threads', 'child_process']

interface Write {
  wrote: string
  builtins: string[]
}

function run(args: string[]): { proc: Proc; writes: () => Write[] } {
  const dir = temp.make('builtins-')
  const out = join(dir, 'writes.jsonl')
  const proc = startNode(['--import', PRELOAD, CLI_BUNDLE, ...args], {
    CHIMERA_HOME: join(dir, 'home'),
    CHIMERA_TEST_BUILTINS_OUT: out,
    // The suite's check of every plain check against zod builds zod schemas, timed with perf_hooks.
    CHIMERA_PLAIN_CHECK_VERIFY: '0',
  })
  const writes = () =>
    readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Write)
  return { proc, writes }
}

const loadedAt = (writes: Write[], answer: RegExp): string[] => {
  const w = writes.find((x) => answer.test(x.wrote))
  expect(w, `a stdout write matching ${answer}`).toBeDefined()
  return LATER.filter((b) => w!.builtins.includes(b))
}

describe('built-ins loaded before the first answers', () => {
  it('ACP session/new is answered before crypto, zlib, perf_hooks, worker_threads and child_process load', async () => {
    const { proc, writes } = run(['ferret', 'serve'])
    const cwd = temp.make('builtins-ws-')
    proc.child.stdin.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: 1, clientCapabilities: {} },
      }) +
        '\n' +
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd, mcpServers: [] } }) +
        '\n',
    )
    await proc.waitLine((m) => m.id === 1 && m.result !== undefined)
    expect(loadedAt(writes(), /"id":1,"result"/)).toEqual([])
    proc.child.stdin.end()
    await proc.exit()
  })

  it('RPC get_state is answered before crypto, zlib, perf_hooks, worker_threads and child_process load', async () => {
    const { proc, writes } = run(['code', '--mode', 'rpc'])
    proc.child.stdin.write('{"type":"get_state","id":1}\n')
    await proc.waitLine((m) => m.type === 'state' || m.id === 1)
    expect(loadedAt(writes(), /"id":1|"type":"state"/)).toEqual([])
    proc.child.stdin.end()
    await proc.exit()
  })
})
