// Three instances over Redis against one server over the file store, same run, over HTTP
// (docs/scale-out.md "Measured"). Prints figures and ratios, asserts nothing.
//   1. POST /sessions -> first SSE record (median and p90 of BENCH_FIRST runs): the file store's
//      server streaming its own session; Redis: created on A, streamed from A, and from B;
//   2. SSE fan-out: BENCH_CLIENTS clients (default 500) on one session, spread over the three
//      instances (A, B, C in turn), while the session's turn says a word every 20 ms for
//      BENCH_SECONDS s (the events it writes are counted): lost records (gaps, a missing end) and the p50/p99 delay (arrival -
//      the event's ts), against the same clients on the one file-store server.
// Every server is the bundled CLI (`otter serve`, offline model, master token: the clients
// are not held to the per-session stream limit); Redis is a private redis-server (appendonly
// yes, appendfsync always), the file store fsyncs. Store-level append figures:
// bench/store-redis.ts.
// Run: node_modules/.bin/tsx bench/scale-out.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startInstance, startInstances, type Instance } from '../server/store/fixtures/instances.ts'
import { follow, gapsAndRepeats } from '../server/store/fixtures/sse-follow.ts'

const FIRST = Number(process.env.BENCH_FIRST ?? 30)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 500)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const TOKEN = 'bench-master-token'
const auth = { authorization: `Bearer ${TOKEN}` }
const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN

async function create(base: string, prompt: string): Promise<string> {
  const res = await fetch(`${base}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ prompt }),
  })
  if (res.status !== 201) throw new Error(`POST /sessions: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { session_id: string }).session_id
}

/** POST /sessions on `writer`, then the time until `reader`'s stream of it yields its first record (ms). */
async function firstRecord(writer: string, reader: string): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < FIRST; i++) {
    const t0 = performance.now()
    const id = await create(writer, '!say hi')
    await new Promise<void>((resolve) => {
      const f = follow(`${reader}/sessions/${id}/events`, {
        headers: auth,
        onRecord: () => {
          out.push(performance.now() - t0)
          f.close()
          resolve()
        },
      })
      void f.done.then(() => resolve())
    })
  }
  return out
}

/** CLIENTS streams of one session over `readers` (in turn) while a turn says a word every 20 ms. */
async function fanout(
  writer: string,
  readers: string[],
): Promise<{ lost: number; events: number; received: number; delays: number[] }> {
  // The turn waits for the clients (a gate below, then its sleep runs out), then ticks.
  const ticks = Array.from({ length: SECONDS * 50 }, (_, i) => `!say tick${i}\n!sleep 20`).join('\n')
  const id = await create(writer, `!sleep 3000\n${ticks}`)
  const delays: number[] = []
  let connected = 0
  let all!: () => void
  const ready = new Promise<void>((r) => (all = r))
  const clients = Array.from({ length: CLIENTS }, (_, c) =>
    follow(`${readers[c % readers.length]}/sessions/${id}/events`, {
      headers: auth,
      onRecord: (r) => {
        if (r.id === undefined) return
        const ts = Date.parse((JSON.parse(r.data) as { ts: string }).ts)
        // Live records only: a client that connected after an event was written replays it.
        if (r.event === 'text_delta') delays.push(Date.now() - ts)
        if (r.id === 1 && ++connected === CLIENTS) all()
      },
    }),
  )
  await Promise.race([ready, new Promise((r) => setTimeout(r, 60_000))])
  const done = await Promise.all(clients.map((c) => c.done))
  let lost = 0
  const events = Math.max(...done.map((d) => Math.max(0, ...d.records.map((r) => r.id ?? 0))))
  for (const d of done) {
    lost += gapsAndRepeats(d.records).length + (d.ended ? 0 : 1)
    const last = Math.max(0, ...d.records.map((r) => r.id ?? 0))
    if (last < events) lost += events - last
  }
  return { lost, events, received: done.reduce((a, d) => a + d.records.length, 0), delays }
}

const dirs: string[] = []
const temp = (p: string): string => {
  const d = mkdtempSync(join(tmpdir(), p))
  dirs.push(d)
  return d
}
const cwd = temp('chimera-bench-scale-ws-')
const args = ['--auth-token', TOKEN, '--approval', 'allow']
let file: Instance | undefined
const cluster = await startInstances(3, { args, workspace: cwd })
try {
  file = await startInstance('file', 'file', { args, workspace: cwd, home: temp('chimera-bench-scale-home-') })
  const [a, b, c] = cluster.instances.map((i) => i.url) as [string, string, string]
  const phase = (name: string): void => void process.stderr.write(`scale-out bench: ${name}\n`)
  phase('first record, file store')
  const fileFirst = await firstRecord(file.url, file.url)
  phase('first record, Redis, same instance')
  const sameFirst = await firstRecord(a, a)
  phase('first record, Redis, other instance')
  const otherFirst = await firstRecord(a, b)
  phase(`fan-out to ${CLIENTS} clients, file store`)
  const fileFan = await fanout(file.url, [file.url])
  phase(`fan-out to ${CLIENTS} clients, Redis`)
  const redisFan = await fanout(a, [a, b, c])
  const r = (x: number, y: number): string => `${(x / y).toFixed(2)}x`
  const ms = (x: number): string => x.toFixed(2)
  console.log(
    `scale-out bench: 3 instances over Redis vs 1 server over the file store (${FIRST} sessions per first-record figure)`,
  )
  console.log('| figure | file store, 1 server | Redis, 3 instances | Redis / file |')
  console.log('|---|---|---|---|')
  console.log(
    `| POST /sessions -> first SSE record p50 (ms) | ${ms(pct(fileFirst, 50))} | ${ms(pct(sameFirst, 50))} (same instance), ${ms(pct(otherFirst, 50))} (other instance) | ${r(pct(sameFirst, 50), pct(fileFirst, 50))}, ${r(pct(otherFirst, 50), pct(fileFirst, 50))} |`,
  )
  console.log(
    `| POST /sessions -> first SSE record p90 (ms) | ${ms(pct(fileFirst, 90))} | ${ms(pct(sameFirst, 90))} (same instance), ${ms(pct(otherFirst, 90))} (other instance) | ${r(pct(sameFirst, 90), pct(fileFirst, 90))}, ${r(pct(otherFirst, 90), pct(fileFirst, 90))} |`,
  )
  console.log(
    `| ${CLIENTS} SSE clients, one session, ${fileFan.events} / ${redisFan.events} events in ~${SECONDS} s: lost records | ${fileFan.lost} (${fileFan.received} received) | ${redisFan.lost} (${redisFan.received} received, clients on A, B, C) | |`,
  )
  console.log(
    `| ${CLIENTS} SSE clients: delay p50 (ms) | ${ms(pct(fileFan.delays, 50))} | ${ms(pct(redisFan.delays, 50))} | ${r(pct(redisFan.delays, 50), pct(fileFan.delays, 50))} |`,
  )
  console.log(
    `| ${CLIENTS} SSE clients: delay p99 (ms) | ${ms(pct(fileFan.delays, 99))} | ${ms(pct(redisFan.delays, 99))} | ${r(pct(redisFan.delays, 99), pct(fileFan.delays, 99))} |`,
  )
} finally {
  await file?.kill()
  await cluster.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
}
