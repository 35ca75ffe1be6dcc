/**
 * Spawn → `initialize` response of `chimera ferret serve` (ACP v1), against spawn → exit of
 * `node -e 0`, median of N runs each, measured in the same run. Prints figures and the ratio
 * (target ≤ 1.5×); asserts nothing. Also prints where the time goes, each phase as the
 * difference of two spawns (docs/decisions/0140-lazy-acp-start-up.md):
 * - node bootstrap: `node -e 0` itself;
 * - CLI entry: `chimera --version` (the ESM entry, citty) beyond that;
 * - ACP path: the serve command's modules, stdin framing and the `initialize` answer beyond that;
 * - deferred load: `session/new` answered after `initialize` (the dialect, zod, the session
 *   manager, loaded only after `initialize` was answered).
 */
import { spawnSync } from 'node:child_process'
import { CLI, median, since, spawnAgent } from './acp-lib.ts'

const N = Number(process.env.BENCH_RUNS ?? 15)

function spawnExit(args: string[]): number {
  const t0 = process.hrtime.bigint()
  spawnSync(process.execPath, args, { stdio: 'ignore' })
  return since(t0)
}

async function initialize(): Promise<{ init: number; session: number }> {
  const t0 = process.hrtime.bigint()
  const peer = spawnAgent(['ferret', 'serve'])
  await peer.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
  const init = since(t0)
  await peer.call('session/new', { cwd: process.cwd(), mcpServers: [] })
  const session = since(t0)
  await peer.close()
  return { init, session }
}

const base: number[] = []
const version: number[] = []
const init: number[] = []
const session: number[] = []
for (let i = 0; i < N; i++) {
  base.push(spawnExit(['-e', '0']))
  version.push(spawnExit([CLI, '--version']))
  const r = await initialize()
  init.push(r.init)
  session.push(r.session)
}
const b = median(base)
const v = median(version)
const a = median(init)
const s = median(session)
const ms = (x: number): string => `${x.toFixed(1)} ms`
console.log(`node -e 0:                         ${ms(b)} (median of ${N})`)
console.log(`ferret serve → initialize (${CLI.split('/').slice(-2).join('/')}): ${ms(a)}`)
console.log(`ratio: ${(a / b).toFixed(2)}× (target ≤ 1.5×)`)
console.log(
  `phases (medians): node bootstrap ${ms(b)} | CLI entry +${ms(v - b)} | ACP path to initialize +${ms(a - v)} | deferred load to session/new +${ms(s - a)}`,
)
