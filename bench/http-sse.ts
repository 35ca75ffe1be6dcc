// SSE and session figures of the HTTP server, each against a baseline measured
// in the same run. Prints; asserts nothing. Loopback socket, offline model.
//   1. POST /sessions to the first SSE record (median of BENCH_FIRST runs) vs a GET /health
//      round trip (target <= 2 ms);
//   2. BENCH_CLIENTS SSE clients (default 500, in a process of their own: bench/sse-clients.mjs)
//      on one session while turns write about BENCH_RATE events/s for BENCH_SECONDS s: gaps (must
//      be 0) and p50/p99 delivery latency (receive time - event ts) vs the p99 of a single client
//      alone;
//   3. Last-Event-ID replay of a session of BENCH_REPLAY events (default 100,000; a real turn's
//      events, its text_delta repeated, appended to the store) from 0 to `end`, vs reading the
//      same events from the store;
//   4. RSS with 100 live sessions vs the RSS before creating them (target <= 100 MB).
// Run: node_modules/.bin/tsx bench/http-sse.ts (BENCH_ONLY=first,replay runs only those figures:
// rss, first, fanout, replay).
import { randomUUID } from 'node:crypto'
import { spawn } from 'node:child_process'
import { createParser } from 'eventsource-parser'
import { request } from 'node:http'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { newSessionId } from '../server/store/paths.ts'
import { minimalSummary } from '../server/store/validate.ts'
import { socketTarget } from '../conformance/harness/targets.ts'

const FIRST = Number(process.env.BENCH_FIRST ?? 30)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 500)
const RATE = Number(process.env.BENCH_RATE ?? 100)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const REPLAY = Number(process.env.BENCH_REPLAY ?? 100_000)
const ONLY = new Set((process.env.BENCH_ONLY ?? 'rss,first,fanout,replay').split(','))
const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN
// Every request carries the master token: guests are held to 32 streams per session (the stream
// limits, docs/http.md), which would refuse most of the fan-out's clients.
const TOKEN = 'bench-master-token'
const AUTH = { authorization: `Bearer ${TOKEN}` }
const t = await socketTarget({ token: TOKEN, sse: { bufferBytes: 1 << 20 } })
const base = t.baseUrl
const post = async (path: string, body?: unknown): Promise<Record<string, unknown>> =>
  (await (
    await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...AUTH },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  ).json()) as Record<string, unknown>

/** Streams answered with anything but 200 (a stream limit): printed beside the gaps. */
let refused = 0

/** An SSE client on node:http: calls `onRecord(id, data)` per record; resolves when the stream ends. */
function subscribe(
  path: string,
  onRecord: (id: number, data: string, at: number) => void,
  headers: Record<string, string> = {},
): { done: Promise<void>; close(): void } {
  let req!: ReturnType<typeof request>
  const done = new Promise<void>((resolve) => {
    req = request(`${base}${path}`, { headers: { accept: 'text/event-stream', ...AUTH, ...headers } }, (res) => {
      if (res.statusCode !== 200) refused++
      let at = 0
      const parser = createParser({
        onEvent: (e) => {
          if (e.id !== undefined) onRecord(Number(e.id), e.data, at)
        },
      })
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        at = Date.now()
        parser.feed(chunk)
      })
      res.on('end', resolve)
      res.on('error', () => resolve())
    })
    req.on('error', () => resolve())
    req.end()
  })
  return { done, close: () => req.destroy() }
}

// 4. (measured first, before the other figures grow the heap) RSS with 100 live sessions.
globalThis.gc?.()
const rss0 = process.memoryUsage().rss
if (ONLY.has('rss')) for (let i = 0; i < 100; i++) await post('/session')
globalThis.gc?.()
const rss1 = process.memoryUsage().rss

// 1. POST /sessions to the first SSE record.
const first: number[] = []
const health: number[] = []
for (let i = 0; i < (ONLY.has('first') ? FIRST : 0); i++) {
  let t0 = performance.now()
  await (await fetch(`${base}/health`, { headers: AUTH })).text()
  health.push(performance.now() - t0)
  t0 = performance.now()
  const { session_id: id } = await post('/sessions', { prompt: '!say hi' })
  await new Promise<void>((resolve) => {
    const s = subscribe(`/sessions/${id}/events`, () => {
      first.push(performance.now() - t0)
      s.close()
      resolve()
    })
  })
}

// 2. Fan-out: many clients on one session while turns write events at about RATE/s. The clients
// run in a process of their own (bench/sse-clients.mjs): in this one, parsing 500 streams took the
// CPU the server needs, and the figure measured the bench's clients as much as the server.
const { session_id: fan } = ONLY.has('fanout') ? await post('/session') : { session_id: '' }
const run = async (
  clients: number,
): Promise<{ gaps: number; p50: number; p99: number; received: number; sent: number; cpuUs: number }> => {
  const start = t.server.deps.manager.peek(fan as string)!.lastSeq
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('./sse-clients.mjs', import.meta.url)),
      JSON.stringify({ url: `${base}/session/${fan}/events`, token: TOKEN, clients, after: start }),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const line = async (): Promise<string> => {
    const next = await lines.next()
    if (next.done) throw new Error('bench/sse-clients.mjs ended early')
    return next.value as string
  }
  if ((await line()) !== 'ready') throw new Error('bench/sse-clients.mjs did not start')
  // CPU time of the server's process per record delivered: steadier than latency on a loaded
  // machine, and what the per-event work of a fan-out costs the server.
  const cpu0 = process.cpuUsage()
  const turnsPerSecond = RATE / 8
  const deadline = Date.now() + SECONDS * 1000
  let n = 0
  while (Date.now() < deadline) {
    await post(`/session/${fan}/message`, { message: `!say tick ${n++}` })
    await new Promise((r) => setTimeout(r, 1000 / turnsPerSecond))
  }
  const session = t.server.deps.manager.peek(fan as string)!
  await session.idle()
  const sent = session.lastSeq - start
  child.stdin.write(`${start + sent}\n`)
  const report = JSON.parse(await line()) as {
    gaps: number
    refused: number
    received: number
    p50: number
    p99: number
  }
  const cpu = process.cpuUsage(cpu0)
  refused += report.refused
  return {
    gaps: report.gaps,
    p50: report.p50,
    p99: report.p99,
    received: report.received,
    sent,
    cpuUs: (cpu.user + cpu.system) / Math.max(1, report.received),
  }
}
const none = { gaps: NaN, p50: NaN, p99: NaN, received: 0, sent: 0, cpuUs: NaN }
const alone = ONLY.has('fanout') ? await run(1) : none
const many = ONLY.has('fanout') ? await run(CLIENTS) : none

// 3. Replay from 0 of a long session: a real turn's events as templates, its text_delta
// repeated to REPLAY events in the store (as a long session would have written them), then
// GET /sessions/{id}/events with Last-Event-ID: 0 until `end` — first while the session is not
// in the manager (loaded from disk by the request), then again with it live.
const replay = async (): Promise<{
  seq: number
  storeMs: number
  fromStore: number
  coldMs: number
  cold: number
  warmMs: number
  warm: number
}> => {
  const { session_id: tpl } = await post('/sessions', { prompt: '!say template' })
  const tplSession = t.server.deps.manager.peek(tpl as string)!
  await tplSession.idle()
  const events = await tplSession.events(0)
  const store = t.server.deps.manager.store
  const meta = {
    session_id: newSessionId('otter'),
    agent: 'otter' as const,
    cwd: t.cwd,
    model: 'offline',
    mode: 'build',
    created_at: new Date().toISOString(),
  }
  await store.create(meta, minimalSummary(meta))
  const head = events.filter((e) => e.type !== 'agent_result' && e.type !== 'text_delta')
  const delta = events.find((e) => e.type === 'text_delta')!
  const tail = events.find((e) => e.type === 'agent_result')!
  let seq = 0
  const put = (e: (typeof events)[number]) =>
    store.append({ ...e, seq: ++seq, id: `evt-${randomUUID()}`, session_id: meta.session_id } as typeof e)
  for (const e of head) await put(e)
  while (seq < REPLAY - 1) await put(delta)
  await put(tail)
  let t0 = performance.now()
  const fromStore = (await store.read(meta.session_id, 0)).length
  const storeMs = performance.now() - t0
  const once = async (): Promise<[number, number]> => {
    const t1 = performance.now()
    let n = 0
    await subscribe(`/sessions/${meta.session_id}/events`, () => void n++, { 'last-event-id': '0' }).done
    return [performance.now() - t1, n]
  }
  t0 = performance.now()
  const [coldMs, cold] = await once()
  const [warmMs, warm] = await once()
  return { seq, storeMs, fromStore, coldMs, cold, warmMs, warm }
}
const r = ONLY.has('replay') ? await replay() : undefined

console.log('| figure | value | baseline (same run) | ratio |')
console.log('|---|---:|---:|---:|')
if (ONLY.has('first'))
  console.log(
    `| POST /sessions -> first SSE record, median of ${FIRST} (target <= 2 ms) | ${pct(first, 50).toFixed(2)} ms | GET /health round trip ${pct(health, 50).toFixed(2)} ms | ${(pct(first, 50) / pct(health, 50)).toFixed(2)}x |`,
  )
if (ONLY.has('fanout'))
  console.log(
    `| ${CLIENTS} SSE clients, ~${RATE} events/s for ${SECONDS} s: gaps | ${many.gaps} (${many.sent} events x ${CLIENTS} clients, ${many.received} received) | 1 client: ${alone.gaps} gaps | ${refused} streams refused |`,
  )
if (ONLY.has('fanout'))
  console.log(
    `| ${CLIENTS} SSE clients: delivery latency p50 / p99 (target p99 <= 100 ms) | ${many.p50} / ${many.p99} ms | 1 client p99 ${alone.p99} ms | ${(many.p99 / Math.max(1, alone.p99)).toFixed(1)}x |`,
  )
if (ONLY.has('fanout'))
  console.log(
    `| ${CLIENTS} SSE clients: server process CPU per record delivered (clients in another process) | ${many.cpuUs.toFixed(1)} µs | 1 client ${alone.cpuUs.toFixed(1)} µs | ${(many.cpuUs / alone.cpuUs).toFixed(2)}x |`,
  )
if (r) {
  console.log(
    `| Last-Event-ID: 0 replay of ${r.seq} events to end, session loaded by the request (${r.cold} received) | ${r.coldMs.toFixed(0)} ms | store read of the same events ${r.storeMs.toFixed(0)} ms (${r.fromStore}) | ${(r.coldMs / r.storeMs).toFixed(2)}x |`,
  )
  console.log(
    `| the same replay again, session live (${r.warm} received) | ${r.warmMs.toFixed(0)} ms | store read ${r.storeMs.toFixed(0)} ms | ${(r.warmMs / r.storeMs).toFixed(2)}x |`,
  )
}
if (ONLY.has('rss'))
  console.log(
    `| RSS with 100 live sessions | +${((rss1 - rss0) / 1048576).toFixed(1)} MB (total ${(rss1 / 1048576).toFixed(0)} MB) | RSS before ${(rss0 / 1048576).toFixed(0)} MB | |`,
  )
await t.close()
process.exit(0)
