/**
 * Spawn → `initialize` response of `chimera ferret serve` (ACP v1), against spawn → exit of
 * `node -e 0`, median of N runs each, measured in the same run. Prints figures and the ratio
 * (target ≤ 1.5×); asserts nothing.
 */
import { spawnSync } from 'node:child_process'
import { CLI, median, since, spawnAgent } from './acp-lib.ts'

const N = Number(process.env.BENCH_RUNS ?? 15)

function nodeBaseline(): number {
  const t0 = process.hrtime.bigint()
  spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' })
  return since(t0)
}

async function initialize(): Promise<number> {
  const t0 = process.hrtime.bigint()
  const peer = spawnAgent(['ferret', 'serve'])
  await peer.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
  const t = since(t0)
  await peer.close()
  return t
}

const base: number[] = []
const init: number[] = []
for (let i = 0; i < N; i++) {
  base.push(nodeBaseline())
  init.push(await initialize())
}
const b = median(base)
const a = median(init)
console.log(`node -e 0:                         ${b.toFixed(1)} ms (median of ${N})`)
console.log(`ferret serve → initialize (${CLI.split('/').slice(-2).join('/')}): ${a.toFixed(1)} ms`)
console.log(`ratio: ${(a / b).toFixed(2)}× (target ≤ 1.5×)`)
