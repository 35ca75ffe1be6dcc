/**
 * RSS of `chimera ferret serve` over a 1,000-prompt ACP v1 session (offline model), read from
 * /proc/<pid>/status after initialize, after 100 prompts and after 1,000. Prints figures; a flat
 * line after warm-up means no per-prompt growth. Linux only; asserts nothing.
 */
import { readFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnAgent } from './acp-lib.ts'

const N = Number(process.env.BENCH_PROMPTS ?? 1000)
const rssMiB = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

const peer = spawnAgent(['ferret', 'serve'])
await peer.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
const cwd = mkdtempSync(join(tmpdir(), 'chimera-bench-ws-'))
const { result } = await peer.call('session/new', { cwd, mcpServers: [] })
const pid = peer.child.pid!
const figures: string[] = [`after initialize: ${rssMiB(pid).toFixed(1)} MiB`]
for (let i = 1; i <= N; i++) {
  const r = await peer.call('session/prompt', {
    sessionId: result.sessionId,
    prompt: [{ type: 'text', text: `!say reply number ${i}` }],
  })
  if (r.result?.stopReason !== 'end_turn') throw new Error(`prompt ${i}: ${JSON.stringify(r)}`)
  if (i === 100 || i === N) figures.push(`after ${i} prompts: ${rssMiB(pid).toFixed(1)} MiB`)
}
await peer.close()
console.log(figures.join('\n'))
