// Start-up figures: `chimera --help` against bare `node -e 0`, and the spawn-to-first-response
// time of the stdio transports (`chimera code --mode rpc` answering get_state, and
// `chimera otter serve --acp` answering initialize). Median of N runs; prints, asserts nothing.
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const N = Number(process.env.BENCH_RUNS ?? 15)
const cli = fileURLToPath(new URL('../bin/chimera.mjs', import.meta.url))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6

function timeCommand(args) {
  const runs = []
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'ignore'] })
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`)
    runs.push(ms(t0))
  }
  return median(runs)
}

function firstResponse(args, line) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['pipe', 'pipe', 'ignore'] })
    child.stdout.once('data', () => {
      const t = ms(t0)
      child.stdin.end()
      child.once('exit', () => resolve(t))
    })
    child.once('error', reject)
    child.stdin.write(`${line}\n`)
  })
}

async function timeFirstResponse(args, line) {
  const runs = []
  for (let i = 0; i < N; i++) runs.push(await firstResponse(args, line))
  return median(runs)
}

const base = timeCommand(['-e', '0'])
const help = timeCommand([cli, '--help'])
const rpc = await timeFirstResponse(['code', '--mode', 'rpc'], '{"type":"get_state","id":1}')
const acp = await timeFirstResponse(
  ['otter', 'serve', '--acp'],
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}',
)
const row = (name, v) =>
  console.log(`${name.padEnd(52)} ${v.toFixed(1).padStart(7)} ms  (${(v / base).toFixed(2)}x node -e 0)`)
console.log(`Node ${process.version}, median of ${N} runs`)
row('node -e 0', base)
row('chimera --help', help)
row('chimera code --mode rpc: spawn → get_state reply', rpc)
row('chimera otter serve --acp: spawn → initialize reply', acp)
