/**
 * The start-up profile: for each surface, spawn → answer of the bundled CLI, split into phases,
 * beside the floor measured in the same run, on Node 20 and Node 24. Prints; asserts nothing.
 *
 * Surfaces and milestones (each against its floor):
 * - ACP (`chimera ferret serve`): `initialize`, `session/new`, the first `!say` prompt answered;
 * - RPC (`chimera code --mode rpc`): `get_state` answered;
 * - HTTP (`chimera otter serve`): the first 200 (GET /health), the first session (POST /sessions);
 * - CLI: `chimera --help`, `chimera --version`, spawn → exit.
 * Floors: a Node process that answers one line on stdin (ACP, RPC); a bare node:http server's
 * first 200 (HTTP); `node -e 0` spawn → exit (CLI). Each run spawns the floor beside the surface,
 * so both meet the same load.
 *
 * Phases: the CLI writes marks to stderr under CHIMERA_STARTUP_TRACE=1 (server/startup-trace.ts):
 * node bootstrap (spawn → Node's bootstrap complete), module loading, validator construction
 * (generated validators built on first use), store open, session creation, first provider call
 * (turn set-up to the model's first event), listen (the HTTP port bound; the HTTP app's modules,
 * loaded and built after it, count as module loading); "answer" is the rest (the request read,
 * dispatched, answered and carried back). Medians per phase, so a phase table need not add up
 * exactly to the median total. The ratio is the median of each run's total over the floor spawned
 * in the same iteration.
 *
 * CPU: on Linux the bench also reads the main thread's time on a CPU (/proc/<pid>/schedstat) when
 * each answer arrives, for the surface and for its floor, and prints that ratio too: on a loaded
 * machine wall time is mostly waiting for a CPU, which squeezes every wall ratio towards 1, while
 * the CPU time a process needs to answer moves much less (figures from `spawnSync`, the CLI ones,
 * have none).
 *
 * BENCH_RUNS (default 9) runs per figure; BENCH_CLI another build's bin/chimera.mjs (a before/after pair); BENCH_NODES=path[,path] the Node binaries (default: this
 * one and .tmp/node24/node_modules/node/bin/node when present: `make bench` fetches it).
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { get, request } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const N = Number(process.env.BENCH_RUNS ?? 9)
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../bin/chimera.mjs', import.meta.url))
const NODE24 = fileURLToPath(new URL('../.tmp/node24/node_modules/node/bin/node', import.meta.url))
const NODES = process.env.BENCH_NODES?.split(',') ?? [process.execPath, ...(existsSync(NODE24) ? [NODE24] : [])]
const PHASES = ['bootstrap', 'modules', 'validators', 'store', 'session', 'provider', 'listen', 'answer'] as const
type Phase = (typeof PHASES)[number]

const now = (): number => performance.timeOrigin + performance.now()
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

/** ms the main thread of `pid` has spent on a CPU so far (Linux), NaN elsewhere. */
function cpuMs(pid: number | undefined): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
  } catch {
    return NaN
  }
}

interface Mark {
  phase: Phase
  at: number
  validators: number
}

/** Phase durations from `start` to `end` (epoch ms) out of a process's marks. */
function phases(start: number, end: number, marks: Mark[]): Record<Phase, number> {
  const out = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>
  let prev = start
  let v = 0
  for (const m of marks) {
    if (m.at > end) break
    const d = Math.max(0, m.at - prev)
    const dv = Math.min(d, Math.max(0, m.validators - v))
    out[m.phase] += d - dv
    out.validators += dv
    prev = Math.max(prev, m.at)
    v = m.validators
  }
  out.answer += Math.max(0, end - prev)
  return out
}

interface Child {
  start: number
  marks: Mark[]
  /** Resolves with the epoch time of the first stdout line satisfying `match`. */
  line(match: (msg: Record<string, unknown>) => boolean): Promise<number>
  /** The child's CPU ms when the line matched by the `line` call that resolved with `at` arrived. */
  cpuAt(at: number): number
  /** The child's CPU ms now. */
  cpu(): number
  write(line: unknown): void
  close(): Promise<void>
}

/** Children still running; killed if the bench itself fails, so no server outlives it. */
const live = new Set<ReturnType<typeof spawn>>()
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL')
})

function spawnChild(node: string, args: string[], env: Record<string, string> = {}): Child {
  const marks: Mark[] = []
  const start = now()
  const child = spawn(node, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  const waiters: { match: (m: Record<string, unknown>) => boolean; resolve: (t: number) => void }[] = []
  const cpuByTime = new Map<number, number>()
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    const at = now()
    cpuByTime.set(at, cpuMs(child.pid))
    out += d
    for (let i = out.indexOf('\n'); i >= 0; i = out.indexOf('\n')) {
      const text = out.slice(0, i)
      out = out.slice(i + 1)
      let msg: Record<string, unknown>
      try {
        msg = JSON.parse(text) as Record<string, unknown>
      } catch {
        continue
      }
      const w = waiters.findIndex((x) => x.match(msg))
      if (w >= 0) waiters.splice(w, 1)[0]!.resolve(at)
    }
  })
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d
    for (let i = err.indexOf('\n'); i >= 0; i = err.indexOf('\n')) {
      const m = /^chimera-startup (\w+) ([\d.]+) ([\d.]+)$/.exec(err.slice(0, i))
      err = err.slice(i + 1)
      if (m) marks.push({ phase: m[1] as Phase, at: Number(m[2]), validators: Number(m[3]) })
    }
  })
  live.add(child)
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      live.delete(child)
      r()
    }),
  )
  return {
    start,
    marks,
    line: (match) => new Promise((resolve) => waiters.push({ match, resolve })),
    cpuAt: (at) => cpuByTime.get(at) ?? NaN,
    cpu: () => cpuMs(child.pid),
    write: (line) => child.stdin.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`),
    async close() {
      child.stdin.end()
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo
      s.close(() => resolve(port))
    })
  })

/** Polls GET `url` (a fresh connection every millisecond) until it answers 200; the epoch time of that answer. */
async function first200(url: string): Promise<number> {
  for (;;) {
    const ok = await new Promise<number | undefined>((resolve) => {
      const req = get(url, (res) => {
        res.resume()
        resolve(res.statusCode === 200 ? now() : undefined)
      })
      req.once('error', () => resolve(undefined))
    })
    if (ok !== undefined) return ok
    await new Promise((r) => setTimeout(r, 1))
  }
}

function postJson(url: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      res.once('end', () =>
        res.statusCode === 201 || res.statusCode === 200
          ? resolve(now())
          : reject(new Error(`POST ${url}: ${res.statusCode}`)),
      )
    })
    req.once('error', reject)
    req.end(JSON.stringify(body))
  })
}

const LINE_FLOOR = "process.stdin.once('data',()=>process.stdout.write('{\"id\":0}\\n'));process.stdin.resume()"
const HTTP_FLOOR = "require('http').createServer((q,s)=>s.end('ok')).listen(+process.argv[1],'127.0.0.1')"

interface Sample {
  total: number
  /** The main thread's CPU ms at the answer. */
  cpu?: number
  phases?: Record<Phase, number>
}
type Figures = Map<string, { runs: Sample[]; floor: string }>

function record(f: Figures, name: string, floor: string, s: Sample): void {
  if (!f.has(name)) f.set(name, { runs: [], floor })
  f.get(name)!.runs.push(s)
}

async function lineFloor(node: string): Promise<[number, number]> {
  const c = spawnChild(node, ['-e', LINE_FLOOR])
  const answered = c.line((m) => m.id === 0)
  c.write('{}')
  const at = await answered
  await c.close()
  return [at - c.start, c.cpuAt(at)]
}

async function httpFloor(node: string): Promise<[number, number]> {
  const port = await freePort()
  const c = spawnChild(node, ['-e', HTTP_FLOOR, String(port)])
  const t = (await first200(`http://127.0.0.1:${port}/`)) - c.start
  const cpu = c.cpu()
  await c.close()
  return [t, cpu]
}

function exitTime(node: string, args: string[]): number {
  const t0 = now()
  const r = spawnSync(node, args, { stdio: 'ignore' })
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`)
  return now() - t0
}

const trace = (home: string): Record<string, string> => ({ CHIMERA_HOME: home, CHIMERA_STARTUP_TRACE: '1' })

async function acp(node: string, f: Figures, home: string): Promise<void> {
  const c = spawnChild(node, [CLI, 'ferret', 'serve'], trace(home))
  const call = async (id: number, method: string, params: unknown): Promise<[number, Record<string, unknown>]> => {
    let reply: Record<string, unknown> = {}
    const at = c.line((m) => m.id === id && !('method' in m) && ((reply = m), true))
    c.write({ jsonrpc: '2.0', id, method, params })
    return [await at, reply]
  }
  const [init] = await call(0, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
  const [created, r] = await call(1, 'session/new', { cwd: home, mcpServers: [] })
  const sessionId = (r.result as { sessionId: string }).sessionId
  const [prompted] = await call(2, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say hi' }] })
  await c.close()
  for (const [name, at] of [
    ['ACP spawn → initialize', init],
    ['ACP spawn → session/new', created],
    ['ACP spawn → first !say prompt', prompted],
  ] as const)
    record(f, name, 'line', { total: at - c.start, cpu: c.cpuAt(at), phases: phases(c.start, at, c.marks) })
}

async function rpc(node: string, f: Figures, home: string): Promise<void> {
  const c = spawnChild(node, [CLI, 'code', '--mode', 'rpc'], trace(home))
  const at = c.line((m) => m.id === 1)
  c.write({ type: 'get_state', id: 1 })
  const t = await at
  await c.close()
  record(f, 'RPC spawn → get_state', 'line', {
    total: t - c.start,
    cpu: c.cpuAt(t),
    phases: phases(c.start, t, c.marks),
  })
}

async function http(node: string, f: Figures, home: string): Promise<void> {
  const port = await freePort()
  const c = spawnChild(node, [CLI, 'otter', 'serve', '--port', String(port)], trace(home))
  const up = await first200(`http://127.0.0.1:${port}/health`)
  const upCpu = c.cpu()
  const created = await postJson(`http://127.0.0.1:${port}/sessions`, { prompt: '!say hi' })
  const createdCpu = c.cpu()
  await c.close()
  record(f, 'HTTP spawn → first 200', 'http', { total: up - c.start, cpu: upCpu, phases: phases(c.start, up, c.marks) })
  record(f, 'HTTP spawn → first session', 'http', {
    total: created - c.start,
    cpu: createdCpu,
    phases: phases(c.start, created, c.marks),
  })
}

const fmt = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '-').padStart(7)

async function profile(node: string): Promise<void> {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
  const f: Figures = new Map()
  const floors = { line: [] as number[], http: [] as number[], exit: [] as number[] }
  const floorCpu = { line: [] as number[], http: [] as number[], exit: [] as number[] }
  const push = (which: 'line' | 'http', [t, cpu]: [number, number]): void => {
    floors[which].push(t)
    floorCpu[which].push(cpu)
  }
  for (let i = 0; i < N; i++) {
    const home = mkdtempSync(join(tmpdir(), 'chimera-startup-'))
    try {
      push('line', await lineFloor(node))
      await acp(node, f, home)
      await rpc(node, f, home)
      push('http', await httpFloor(node))
      await http(node, f, home)
      floors.exit.push(exitTime(node, ['-e', '0']))
      floorCpu.exit.push(NaN)
      record(f, 'chimera --help', 'exit', { total: exitTime(node, [CLI, '--help']) })
      record(f, 'chimera --version', 'exit', { total: exitTime(node, [CLI, '--version']) })
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  }
  const floor = { line: median(floors.line), http: median(floors.http), exit: median(floors.exit) }
  console.log(
    `\nNode ${version}: median of ${N} runs; floors of the same run: one line answered ${floor.line.toFixed(1)} ms, bare node:http first 200 ${floor.http.toFixed(1)} ms, node -e 0 ${floor.exit.toFixed(1)} ms`,
  )
  console.log(
    `${'milestone'.padEnd(30)}   total   floor   ratio target |     cpu cpu floor  cpu ratio |${PHASES.map((p) => p.padStart(10)).join('')}`,
  )
  for (const [name, { runs, floor: which }] of f) {
    const total = median(runs.map((r) => r.total))
    const base = floor[which as keyof typeof floor]
    // Each run against the floor spawned beside it (a load swing moves both), then the median.
    const own = floors[which as keyof typeof floors]
    const ratio = median(runs.map((r, i) => r.total / own[i]!))
    const cells = PHASES.map((p) =>
      (runs[0]!.phases ? fmt(median(runs.map((r) => r.phases![p]))) : '      -').padStart(10),
    )
    const target = /session\/new|get_state|first 200|--help/.test(name) ? '≤1.50×' : '      '
    const cpu = median(runs.map((r) => r.cpu ?? NaN))
    const cpuFloor = median(floorCpu[which as keyof typeof floorCpu])
    const cpuRatio = median(runs.map((r, i) => (r.cpu ?? NaN) / floorCpu[which as keyof typeof floorCpu][i]!))
    const cpuCells = `${fmt(cpu)} ${fmt(cpuFloor).padStart(9)} ${(Number.isFinite(cpuRatio) ? `${cpuRatio.toFixed(2)}×` : '-').padStart(10)}`
    console.log(
      `${name.padEnd(30)} ${fmt(total)} ${fmt(base)} ${ratio.toFixed(2).padStart(6)}× ${target} |${cpuCells} |${cells.join('')}`,
    )
  }
}

for (const node of NODES) await profile(node)
