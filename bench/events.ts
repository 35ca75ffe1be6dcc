// Event-log figures, each beside its target and a floor measured in the same run. Prints;
// asserts nothing. Loopback sockets, the offline model, temporary homes.
//   1. events/s of one session: a prompt of BENCH_CALLS (default 1,000) `!call Glob` lines, over
//      JSON-lines RPC (`chimera code --mode rpc`, the bundle) and over HTTP (POST /sessions on a
//      loopback server), vs writing one small file per event with fs.promises (target >= 5,000/s);
//      beside each rate the same count per CPU-second (the server's, or this process's), which
//      swings less with the machine's load than the wall-clock rate;
//   2. events/s across BENCH_SESSIONS (default 50) sessions at once over HTTP, each a prompt of
//      BENCH_CALLS / 5 calls, vs the same number of concurrent one-file-per-event writers
//      (target >= 20,000/s);
//   3. the ACP prompt round trip (`!say hi`, median and p90 of BENCH_PROMPTS) of `chimera ferret
//      serve` vs a raw 20-line Node ACP agent (target <= 3x), and beside it the ratio to a durable
//      floor: the same raw agent writing one small fresh file (fs.promises writeFile) before it
//      answers (a durable agent cannot answer before its disk does);
//   4. the ACP round trip late in a long session (BENCH_LONG_PROMPTS, default 4,000 prompts on one
//      session, the median of the last 300) against the same session's prompts 301-600: a turn's
//      cost must not grow with the session;
//   5. Last-Event-ID: 0 replay of a BENCH_REPLAY-event session (default 100,000) over
//      GET /sessions/{id}/events, cold (the session written to disk by another process, so the
//      server opens it for the request) and warm (again, live), vs a node:http server sending
//      the same bytes from memory (target <= 3x); medians of BENCH_REPLAY_RUNS (default 5), cold
//      after the server let the session go (evicted: the next request opens it again, or sends
//      what the segment's checksum vouches for, written at that eviction; the first cold run,
//      before any eviction, has none and is printed beside the median).
// Run: node_modules/.bin/tsx bench/events.ts (BENCH_ONLY=one,many,acp,long,replay runs only those;
// BENCH_NODE and BENCH_CLI select the node binary and the bundle of the RPC figure). Files are
// removed only at the end (see fileFloor).
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir, open } from 'node:fs/promises'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { socketTarget } from '../conformance/harness/targets.ts'
import type { AnyEvent } from '../server/events/event-types.ts'
import { eventFileName, eventlogRoot, newSessionId } from '../server/store/paths.ts'
import { minimalSummary } from '../server/store/validate.ts'
import { CLI, median, since, spawnAgent, peerOf, type Peer } from './acp-lib.ts'

const CALLS = Number(process.env.BENCH_CALLS ?? 1000)
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 50)
const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 30)
const LONG = Number(process.env.BENCH_LONG_PROMPTS ?? 4000)
const REPLAY = Number(process.env.BENCH_REPLAY ?? 100_000)
const REPLAY_RUNS = Number(process.env.BENCH_REPLAY_RUNS ?? 5)
/** The node binary and the bundle the RPC figure runs (BENCH_NODE, BENCH_CLI: another build to compare). */
const NODE = process.env.BENCH_NODE ?? process.execPath
const RPC_CLI = process.env.BENCH_CLI ?? CLI
const ONLY = new Set((process.env.BENCH_ONLY ?? 'one,many,acp,long,replay').split(','))
const rows: string[] = []
const row = (figure: string, value: string, target: string, floor: string, ratio: string): void => {
  rows.push(`| ${figure} | ${value} | ${target} | ${floor} | ${ratio} |`)
}
const rate = (n: number, ms: number): number => (n * 1000) / ms
const fmt = (x: number): string => Math.round(x).toLocaleString('en-US')
/** CPU time (user + system, ms) of this process since `from` (`process.cpuUsage()`). */
const cpuSince = (from: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(from)
  return (u.user + u.system) / 1000
}
/** CPU time (user + system, ms) a child process has used so far (`/proc/<pid>/stat`; 0 where there is none). */
function childCpu(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100
  } catch {
    return 0
  }
}
/** A rate per second of wall time with the same count per CPU-second beside it (load-independent). */
const rates = (n: number, ms: number, cpuMs: number): string =>
  `${fmt(rate(n, ms))}/s${cpuMs > 0 ? ` (${fmt(rate(n, cpuMs))}/CPU-s)` : ''}`
const base = mkdtempSync(join(tmpdir(), 'chimera-bench-events-'))
const callsPrompt = (n: number): string => Array.from({ length: n }, () => '!call Glob {"pattern":"*.txt"}').join('\n')

/** The load average (1, 5, 15 min), where /proc has it. */
function readLoad(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  } catch {
    return 'n/a'
  }
}

/** The floor: `writers` concurrent writers each creating `files` small files with fs.promises, one after another. */
async function fileFloor(writers: number, files: number): Promise<{ n: number; ms: number; cpuMs: number }> {
  const root = join(base, `floor-${randomUUID()}`)
  const text = `${JSON.stringify({ seq: 1, type: 'tool_result', data: { ok: true, output: 'a.txt\nb.txt' } })}\n`
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const dir = join(root, String(w))
      await mkdir(dir, { recursive: true })
      for (let i = 0; i < files; i++) {
        const fh = await open(join(dir, `event-${String(i).padStart(6, '0')}.json`), 'wx')
        await fh.writeFile(text)
        await fh.close()
      }
    }),
  )
  const ms = performance.now() - t0
  const cpuMs = cpuSince(c0)
  // Removed with the rest at the end, not now: a file system that skips recently freed inodes
  // (ext4 without a journal scans past them on every create) would charge the next figure for it.
  return { n: writers * files, ms, cpuMs }
}

/** A workspace with a few files for Glob to find. */
function workspace(): string {
  const ws = join(base, `ws-${randomUUID()}`)
  mkdirSync(ws)
  for (let i = 0; i < 5; i++) writeFileSync(join(ws, `f${i}.txt`), 'x\n')
  return ws
}

/** One prompt over `chimera code --mode rpc`: events written (counted on disk), wall and server CPU ms. */
async function rpcOne(): Promise<{ n: number; ms: number; cpuMs: number }> {
  const home = join(base, `rpc-home-${randomUUID()}`)
  mkdirSync(home)
  const child = spawn(NODE, [RPC_CLI, 'code', '--mode', 'rpc', '--cwd', workspace()], {
    env: { ...process.env, CHIMERA_HOME: home },
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  let buf = ''
  const replies = new Map<string, (m: Record<string, unknown>) => void>()
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buf += d
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, i)) as Record<string, unknown>
      buf = buf.slice(i + 1)
      if (m.type === 'response' || m.type === 'state') replies.get(String(m.id))?.(m)
    }
  })
  const send = (cmd: Record<string, unknown>): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      replies.set(String(cmd.id), resolve)
      child.stdin.write(`${JSON.stringify(cmd)}\n`)
    })
  await send({ type: 'get_state', id: 'warm' })
  const c0 = childCpu(child.pid)
  const t0 = performance.now()
  const r = await send({ type: 'prompt', id: 'p', message: callsPrompt(CALLS) })
  const ms = performance.now() - t0
  const cpuMs = childCpu(child.pid) - c0
  child.stdin.end()
  await new Promise((resolve) => child.once('exit', resolve))
  if (r.success !== true) throw new Error(`rpc prompt failed: ${JSON.stringify(r)}`)
  const root = eventlogRoot(home)
  const [id] = readdirSync(root)
  const n = readdirSync(join(root, id!)).filter((f) => f.startsWith('event-')).length
  return { n, ms, cpuMs }
}

type Target = Awaited<ReturnType<typeof socketTarget>>
/** Servers closed (and their homes removed) only at the end, as the floors' files (see fileFloor). */
const keptOpen: Target[] = []
const postJson = async (t: Target, path: string, body: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as Record<string, unknown>
}

/** `sessions` prompts of `calls` calls at once over HTTP: events written in all, wall and CPU ms (this process: server and client). */
async function httpSessions(
  t: Target,
  sessions: number,
  calls: number,
): Promise<{ n: number; ms: number; cpuMs: number }> {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const seqs = await Promise.all(
    Array.from({ length: sessions }, async () => {
      const { session_id: id } = await postJson(t, '/sessions', { prompt: callsPrompt(calls) })
      const s = t.server.deps.manager.peek(id as string)!
      await s.idle()
      return s.lastSeq
    }),
  )
  const ms = performance.now() - t0
  return { n: seqs.reduce((a, b) => a + b, 0), ms, cpuMs: cpuSince(c0) }
}

/** A raw ACP agent in plain Node: answers initialize, session/new and a prompt (one chunk, then end_turn). */
const RAW_AGENT = `
const rl = require('node:readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n')
let n = 0
rl.on('line', (line) => {
  const m = JSON.parse(line)
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } })
  else if (m.method === 'session/new') send({ id: m.id, result: { sessionId: 'raw-' + ++n } })
  else if (m.method === 'session/prompt') {
    const text = m.params.prompt.map((b) => b.text ?? '').join('')
    send({ method: 'session/update', params: { sessionId: m.params.sessionId,
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } })
    send({ id: m.id, result: { stopReason: 'end_turn' } })
  } else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'Method not found' } })
})
`

/**
 * The durable floor: the raw agent, but a prompt is answered only after one small fresh file
 * (the prompt's line, `fs.promises.writeFile` into argv[2]) is written.
 */
const RAW_DURABLE_AGENT = `
const rl = require('node:readline').createInterface({ input: process.stdin })
const { writeFile } = require('node:fs/promises')
const { join } = require('node:path')
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n')
let n = 0
rl.on('line', async (line) => {
  const m = JSON.parse(line)
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } })
  else if (m.method === 'session/new') send({ id: m.id, result: { sessionId: 'raw-' + ++n } })
  else if (m.method === 'session/prompt') {
    await writeFile(join(process.argv[2], 'prompt-' + ++n + '.json'), line + '\\n')
    const text = m.params.prompt.map((b) => b.text ?? '').join('')
    send({ method: 'session/update', params: { sessionId: m.params.sessionId,
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } })
    send({ id: m.id, result: { stopReason: 'end_turn' } })
  } else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'Method not found' } })
})
`

/** The raw agent as a Peer (JSON-RPC over its stdio). */
const rawPeer = (script: string, ...args: string[]): Peer =>
  peerOf(spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'ignore'] }))

/**
 * Prompt round trips (ms, sorted, and in the order sent) of an ACP agent: `!say hi`, `prompts`
 * times on one session after one warm-up, and the agent's CPU time per prompt meanwhile (ms;
 * /proc, in clock ticks: use a few hundred prompts).
 */
async function acpRoundTrip(peer: Peer, prompts = PROMPTS): Promise<{ times: number[]; sent: number[]; cpu: number }> {
  await peer.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
  const { result } = await peer.call('session/new', { cwd: workspace(), mcpServers: [] })
  const sessionId = (result as { sessionId: string }).sessionId
  const prompt = () => peer.call('session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say hi' }] })
  await prompt()
  const times: number[] = []
  const cpu0 = childCpu(peer.child.pid)
  for (let i = 0; i < prompts; i++) {
    const t0 = process.hrtime.bigint()
    const r = await prompt()
    times.push(since(t0))
    if (!r.result) throw new Error(`prompt failed: ${JSON.stringify(r)}`)
  }
  const cpu = (childCpu(peer.child.pid) - cpu0) / prompts
  await peer.close()
  return { times: [...times].sort((a, b) => a - b), sent: times, cpu }
}
const p90 = (sorted: number[]): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))]!

/**
 * A full garbage collection, where the runtime lets a script ask for one: each timed replay (and
 * each floor run) starts with an empty heap, so the garbage of the setup before it (a session of
 * 100,000 events loaded or let go) is not collected on its clock.
 */
const collect: () => void = (() => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as unknown
  return typeof gc === 'function' ? (gc as () => void) : () => {}
})()

/**
 * GET `url` with Last-Event-ID: 0 until the server ends it: [ms, records, bytes, CPU ms of this
 * process (server and client) meanwhile].
 */
function getAll(url: string): Promise<[number, number, Buffer, number]> {
  collect()
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', 'last-event-id': '0' } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        let records = 0
        for (let i = body.indexOf('\nid: '); i >= 0; i = body.indexOf('\nid: ', i + 1)) records++
        const c = process.cpuUsage(c0)
        resolve([performance.now() - t0, records, body, (c.user + c.system) / 1000])
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * A session of REPLAY events written straight to disk as the store lays it out (the event files
 * and `events.jsonl`), from a real turn's events, its text_delta repeated: the server has never
 * opened it.
 */
async function writeLongSession(t: Target): Promise<string> {
  const { session_id: tpl } = await postJson(t, '/sessions', { prompt: '!say template' })
  const s = t.server.deps.manager.peek(tpl as string)!
  await s.idle()
  const events = await s.events(0)
  const head = events.filter((e) => e.type !== 'agent_result' && e.type !== 'text_delta')
  const delta = events.find((e) => e.type === 'text_delta')!
  const tail = events.find((e) => e.type === 'agent_result')!
  const id = newSessionId('otter')
  const dir = join(eventlogRoot(t.home), id)
  mkdirSync(dir, { recursive: true })
  const meta = {
    session_id: id,
    agent: 'otter' as const,
    cwd: t.cwd,
    model: 'offline',
    mode: 'build',
    created_at: new Date().toISOString(),
  }
  writeFileSync(join(dir, 'session.json'), `${JSON.stringify(meta, null, 2)}\n`)
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(minimalSummary(meta), null, 2)}\n`)
  const lines: string[] = []
  let seq = 0
  const put = (e: AnyEvent): void => {
    const rec = { ...e, seq: ++seq, id: `evt-${randomUUID()}`, session_id: id } as AnyEvent
    const text = `${JSON.stringify(rec)}\n`
    writeFileSync(join(dir, eventFileName(rec.seq, rec.type)), text, { flag: 'wx' })
    lines.push(text)
  }
  for (const e of head) put(e)
  while (seq < REPLAY - 1) put(delta)
  put(tail)
  writeFileSync(join(dir, 'events.jsonl'), lines.join(''))
  return id
}

/** The same bytes sent from memory by a bare node:http server: ms to receive them all. */
async function fromMemory(body: Buffer): Promise<{ ms: number; cpu: number }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    // In 64 KiB chunks, as the SSE response coalesces records.
    for (let at = 0; at < body.length; at += 65536) res.write(body.subarray(at, at + 65536))
    res.end()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  await getAll(url)
  const times: number[] = []
  const cpus: number[] = []
  for (let i = 0; i < REPLAY_RUNS; i++) {
    const [ms, , , cpu] = await getAll(url)
    times.push(ms)
    cpus.push(cpu)
  }
  server.close()
  return { ms: median(times), cpu: median(cpus) }
}

try {
  if (ONLY.has('one')) {
    const floor = await fileFloor(1, 3 * CALLS)
    const rpc = await rpcOne()
    const t = await socketTarget({ workspace: { 'a.txt': 'a\n', 'b.txt': 'b\n' } })
    const http = await httpSessions(t, 1, CALLS)
    keptOpen.push(t)
    const f = `fs.promises one file per event, 1 writer: ${rates(floor.n, floor.ms, floor.cpuMs)}`
    const ratio = (x: { n: number; ms: number }): string => `${(rate(x.n, x.ms) / rate(floor.n, floor.ms)).toFixed(2)}x`
    row(
      `one session, ${CALLS} \`!call Glob\`, RPC (CPU: the server process)`,
      `${rates(rpc.n, rpc.ms, rpc.cpuMs)} events`,
      '>= 5,000/s',
      f,
      ratio(rpc),
    )
    row(
      `one session, ${CALLS} \`!call Glob\`, HTTP (CPU: server and client in one process)`,
      `${rates(http.n, http.ms, http.cpuMs)} events`,
      '>= 5,000/s',
      f,
      ratio(http),
    )
  }
  if (ONLY.has('many')) {
    const calls = Math.max(1, Math.floor(CALLS / 5))
    const floor = await fileFloor(SESSIONS, 3 * calls)
    const t = await socketTarget({ workspace: { 'a.txt': 'a\n', 'b.txt': 'b\n' } })
    const many = await httpSessions(t, SESSIONS, calls)
    keptOpen.push(t)
    row(
      `${SESSIONS} sessions at once, ${calls} calls each, HTTP`,
      `${rates(many.n, many.ms, many.cpuMs)} events`,
      '>= 20,000/s',
      `fs.promises one file per event, ${SESSIONS} writers: ${rates(floor.n, floor.ms, floor.cpuMs)}`,
      `${(rate(many.n, many.ms) / rate(floor.n, floor.ms)).toFixed(2)}x`,
    )
  }
  if (ONLY.has('acp')) {
    const raw = join(base, 'raw-agent.cjs')
    writeFileSync(raw, RAW_AGENT)
    const durable = join(base, 'raw-durable-agent.cjs')
    writeFileSync(durable, RAW_DURABLE_AGENT)
    const files = join(base, 'raw-durable-files')
    mkdirSync(files)
    const rawRun = await acpRoundTrip(rawPeer(raw))
    const rawMs = median(rawRun.times)
    const floorRun = await acpRoundTrip(rawPeer(durable, files))
    const floor = floorRun.times
    // BENCH_CLI: another build's dist/chimera.mjs (an A/B run against the same floors).
    const run = await acpRoundTrip(spawnAgent(['ferret', 'serve'], process.env.BENCH_CLI))
    const oursAll = run.times
    const ours = median(oursAll)
    row(
      `ACP prompt round trip (\`!say hi\`, median of ${PROMPTS}; p90 ${p90(oursAll).toFixed(2)} ms)`,
      `${ours.toFixed(2)} ms`,
      '<= 3x',
      `raw Node ACP agent ${rawMs.toFixed(2)} ms`,
      `${(ours / rawMs).toFixed(2)}x`,
    )
    row(
      'the same, against a durable floor',
      `${ours.toFixed(2)} ms`,
      '(context)',
      `the raw agent writing one small fresh file per prompt: ${median(floor).toFixed(2)} ms (p90 ${p90(floor).toFixed(2)})`,
      `${(ours / median(floor)).toFixed(2)}x`,
    )
    row(
      'the agent process CPU per prompt (user + system, /proc)',
      `${run.cpu.toFixed(2)} ms`,
      '(context)',
      `raw agent ${rawRun.cpu.toFixed(2)} ms; durable raw agent ${floorRun.cpu.toFixed(2)} ms`,
      // /proc counts 10 ms ticks: a floor under 3 ticks in all is no base for a ratio.
      floorRun.cpu * PROMPTS >= 30
        ? `${(run.cpu / floorRun.cpu).toFixed(2)}x the durable floor`
        : `- (the floor used under 3 clock ticks: BENCH_PROMPTS=300 for a ratio)`,
    )
  }
  if (ONLY.has('long')) {
    // One session, LONG prompts: the round trip late in the session against early in it (prompts
    // 301-600: the first 300 are the process warming up). A turn must not slow as the session grows.
    const run = await acpRoundTrip(spawnAgent(['ferret', 'serve'], process.env.BENCH_CLI), LONG)
    const window = (from: number) => median(run.sent.slice(from, from + 300))
    const early = window(300)
    const late = window(Math.max(300, LONG - 300))
    row(
      `ACP round trip late in a session (\`!say hi\`, median of prompts ${Math.max(300, LONG - 300) + 1}-${LONG} of one session)`,
      `${late.toFixed(2)} ms`,
      '(context)',
      `the same session's prompts 301-600: ${early.toFixed(2)} ms`,
      `${(late / early).toFixed(2)}x`,
    )
  }
  if (ONLY.has('replay')) {
    const t = await socketTarget()
    const id = await writeLongSession(t)
    const url = `${t.baseUrl}/sessions/${id}/events`
    // Medians of REPLAY_RUNS: cold after the server let the session go (evicted and released by
    // the store: the next request opens it again), warm while it is live.
    const coldRuns: number[] = []
    const warmRuns: number[] = []
    const coldCpu: number[] = []
    const warmCpu: number[] = []
    let cold = 0
    let warm = 0
    let body: Buffer = Buffer.alloc(0)
    for (let i = 0; i < REPLAY_RUNS; i++) {
      t.server.deps.manager.evictIdle(1, Date.now() + 60_000)
      await new Promise((r) => setTimeout(r, 50))
      const [ms, n, b, cpu] = await getAll(url)
      coldRuns.push(ms)
      coldCpu.push(cpu)
      cold = n
      body = b
      // Warm: the session live in the manager (a cold replay the store vouches for does not
      // load it, docs/decisions/0392-vouched-segment.md).
      await t.server.deps.manager.get(id)
      const [wms, wn, , wcpu] = await getAll(url)
      warmRuns.push(wms)
      warmCpu.push(wcpu)
      warm = wn
    }
    const coldMs = median(coldRuns)
    const warmMs = median(warmRuns)
    await t.close()
    const { ms: mem, cpu: memCpu } = await fromMemory(body)
    const f = `the same ${(body.length / 1048576).toFixed(1)} MB from memory ${mem.toFixed(0)} ms`
    row(
      `Last-Event-ID: 0 replay of ${REPLAY} events, cold (${cold} records, median of ${REPLAY_RUNS}; the first, written by another process, has no segment checksum yet and loads the session: ${coldRuns[0]!.toFixed(0)} ms, ${(coldRuns[0]! / mem).toFixed(2)}x)`,
      `${coldMs.toFixed(0)} ms`,
      '<= 3x',
      f,
      `${(coldMs / mem).toFixed(2)}x`,
    )
    row(
      `the same replay, warm (${warm} records)`,
      `${warmMs.toFixed(0)} ms`,
      '<= 3x',
      f,
      `${(warmMs / mem).toFixed(2)}x`,
    )
    // CPU time swings less than wall time on a loaded machine: the same figures as CPU of this
    // process (the server and the client both), against the floor's.
    const fc = `the same bytes from memory: ${memCpu.toFixed(0)} ms CPU`
    row(
      `the cold replay, CPU (median; the first: ${coldCpu[0]!.toFixed(0)} ms)`,
      `${median(coldCpu).toFixed(0)} ms`,
      '<= 3x',
      fc,
      `${(median(coldCpu) / memCpu).toFixed(2)}x`,
    )
    row(
      'the warm replay, CPU',
      `${median(warmCpu).toFixed(0)} ms`,
      '<= 3x',
      fc,
      `${(median(warmCpu) / memCpu).toFixed(2)}x`,
    )
  }
} finally {
  for (const t of keptOpen) await t.close()
  rmSync(base, { recursive: true, force: true })
}
console.log(`Node ${process.version}, load average ${readLoad()}`)
console.log('| figure | value | target | floor (same run) | ratio |')
console.log('|---|---:|---|---|---:|')
for (const r of rows) console.log(r)
process.exit(0)
