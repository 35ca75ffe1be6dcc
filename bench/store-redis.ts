// Redis store against the file store, same run (docs/scale-out.md): sequential append throughput
// of one session (each append acknowledged before the next, as a turn writes), appends of 16
// sessions at once, and the delay from an append's start to a live stream on ANOTHER store
// instance yielding it (Redis: across instances through XREAD BLOCK; file store: the same
// process's stream, the best it can do). A private redis-server (fixtures/redis-server.ts,
// appendonly yes, appendfsync always); the file store with fsync on, so both acknowledge durable
// writes. Prints figures and ratios, asserts nothing.
// Run: node_modules/.bin/tsx bench/store-redis.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileEventStore } from '../server/store/file-store.ts'
import { sampleEvent, sampleMeta, sampleSummary } from '../server/store/fixtures/sample.ts'
import { startRedis } from '../server/store/fixtures/redis-server.ts'
import { RedisEventStore } from '../server/store/redis-store.ts'
import type { EventStore } from '../server/store/types.ts'

const N = Number(process.env.BENCH_EVENTS ?? 2000)
const SESSIONS = 16
const LATENCY_SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200)

async function session(store: EventStore): Promise<string> {
  const meta = sampleMeta('otter')
  await store.create(meta, sampleSummary(meta))
  return meta.session_id
}

async function sequential(store: EventStore): Promise<number> {
  const id = await session(store)
  const t = performance.now()
  for (let i = 1; i <= N; i++) await store.append(sampleEvent(id, i))
  return N / ((performance.now() - t) / 1000)
}

async function parallel(store: EventStore): Promise<number> {
  const ids = await Promise.all(Array.from({ length: SESSIONS }, () => session(store)))
  const per = Math.floor(N / SESSIONS)
  const t = performance.now()
  await Promise.all(
    ids.map(async (id) => {
      for (let i = 1; i <= per; i++) await store.append(sampleEvent(id, i))
    }),
  )
  return (per * SESSIONS) / ((performance.now() - t) / 1000)
}

/** p50 / p99 ms from an append's start to `reader`'s stream yielding it. */
async function latency(writer: EventStore, reader: EventStore): Promise<[number, number]> {
  const id = await session(writer)
  const ctl = new AbortController()
  const started = new Map<number, number>()
  const delays: number[] = []
  let next: (() => void) | undefined
  const consuming = (async () => {
    for await (const e of reader.stream(id, { signal: ctl.signal })) {
      delays.push(performance.now() - started.get(e.seq)!)
      next?.()
      if (e.seq === LATENCY_SAMPLES) return
    }
  })()
  for (let i = 1; i <= LATENCY_SAMPLES; i++) {
    const seen = new Promise<void>((r) => (next = r))
    started.set(i, performance.now())
    await writer.append(sampleEvent(id, i))
    await seen
  }
  await consuming
  ctl.abort()
  const sorted = delays.sort((a, b) => a - b)
  return [sorted[Math.floor(sorted.length * 0.5)]!, sorted[Math.floor(sorted.length * 0.99)]!]
}

const dir = mkdtempSync(join(tmpdir(), 'chimera-bench-store-'))
const redis = await startRedis()
try {
  const file = new FileEventStore({ root: join(dir, 'eventlog'), fsync: true })
  const a = new RedisEventStore({ url: redis.url })
  const b = new RedisEventStore({ url: redis.url })
  await a.connect()
  await b.connect()
  const fileSeq = await sequential(file)
  const redisSeq = await sequential(a)
  const filePar = await parallel(file)
  const redisPar = await parallel(a)
  const [fileP50, fileP99] = await latency(file, file)
  const [redisP50, redisP99] = await latency(a, b)
  const r = (x: number, y: number): string => `${(x / y).toFixed(2)}x`
  console.log(`store bench: ${N} events, fsync on both (Redis: appendonly yes, appendfsync always)`)
  console.log(`| figure | file store | Redis store | Redis / file |`)
  console.log(`|---|---|---|---|`)
  console.log(`| appends/s, one session | ${fileSeq.toFixed(0)} | ${redisSeq.toFixed(0)} | ${r(redisSeq, fileSeq)} |`)
  console.log(
    `| appends/s, ${SESSIONS} sessions at once | ${filePar.toFixed(0)} | ${redisPar.toFixed(0)} | ${r(redisPar, filePar)} |`,
  )
  console.log(
    `| append → live stream p50 (ms) | ${fileP50.toFixed(2)} | ${redisP50.toFixed(2)} (other instance) | ${r(redisP50, fileP50)} |`,
  )
  console.log(
    `| append → live stream p99 (ms) | ${fileP99.toFixed(2)} | ${redisP99.toFixed(2)} (other instance) | ${r(redisP99, fileP99)} |`,
  )
  await a.close()
  await b.close()
} finally {
  await redis.stop()
  rmSync(dir, { recursive: true, force: true })
}
