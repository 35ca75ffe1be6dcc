/**
 * `EventStore.stream`: catch-up then live with no gap and no duplicate at the seam, on both
 * stores — from the start, from a cursor inside the recent ring, from a cursor older than the
 * ring (a directory read), while appends land during the catch-up read; a consumer slower than
 * the live buffer falls back to catch-up reads and still sees every event exactly once with
 * bounded buffering; the signal ends the stream; a bounded memory store reports its gap. The
 * Redis store runs the same cases against its own private redis-server.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { FileEventStore } from './file-store.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { MemoryEventStore } from './memory-store.ts'
import { RING_MAX_EVENTS } from './recent-ring.ts'
import { redisStoreForTest } from './fixtures/redis-server.ts'
import { RedisEventStore } from './redis-store.ts'
import type { EventStore } from './types.ts'
import { openedStores } from './fixtures/stores.ts'

const fileStores = openedStores()
afterEach(() => fileStores.closeAll())

const temp = tempDirs()
const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  temp.cleanup()
  for (const stop of stops.splice(0).reverse()) await stop()
})

type Make = () => EventStore | Promise<EventStore>
const stores: [string, Make][] = [
  ['file store', () => fileStores.open({ root: temp.make('stream-') })],
  ['memory store', () => new MemoryEventStore()],
  // Small pages, so the catch-up reads of these tests take several.
  ['Redis store', () => redisStoreForTest(stops, { pageEvents: 64 })],
]

async function session(store: EventStore): Promise<string> {
  const meta = sampleMeta('otter')
  await store.create(meta, sampleSummary(meta))
  return meta.session_id
}

async function appendN(store: EventStore, id: string, from: number, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await store.append(sampleEvent(id, from + i))
}

/** Take events from the stream until `n` arrived (bounded), then stop it. */
async function take(
  store: EventStore,
  id: string,
  afterSeq: number,
  n: number,
  onEach?: (e: AnyEvent) => Promise<void> | void,
): Promise<number[]> {
  const ctl = new AbortController()
  const seqs: number[] = []
  const timer = setTimeout(() => ctl.abort(), 10_000)
  for await (const e of store.stream(id, { afterSeq, signal: ctl.signal })) {
    seqs.push(e.seq)
    await onEach?.(e)
    if (seqs.length >= n) break
  }
  clearTimeout(timer)
  return seqs
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe.each(stores)('%s stream', (_name, make) => {
  it('catches up from the start, then delivers live events, each once and in order', async () => {
    const store = await make()
    const id = await session(store)
    await appendN(store, id, 1, 20)
    const got = take(store, id, 0, 50)
    await appendN(store, id, 21, 30)
    expect(await got).toEqual(range(1, 50))
  })

  it('from a cursor: only the events after it', async () => {
    const store = await make()
    const id = await session(store)
    await appendN(store, id, 1, 40)
    const got = take(store, id, 33, 12)
    await appendN(store, id, 41, 5)
    expect(await got).toEqual(range(34, 45))
  })

  it('appends landing while the catch-up read is in flight are neither lost nor repeated', async () => {
    const store = await make()
    const id = await session(store)
    await appendN(store, id, 1, 200)
    // Start streaming and appending at the same moment, many times over.
    const got = take(store, id, 0, 400)
    const writer = appendN(store, id, 201, 200)
    await writer
    expect(await got).toEqual(range(1, 400))
  })

  it('a consumer slower than its live buffer falls back to catch-up and still sees every event exactly once', async () => {
    const store = await make()
    const id = await session(store)
    let reads = 0
    const original = store.read.bind(store)
    store.read = (sid: string, after?: number) => {
      reads++
      return original(sid, after)
    }
    if (store instanceof RedisEventStore) {
      const page = store.readPage.bind(store)
      store.readPage = (sid: string, after: number, limit?: number) => {
        reads++
        return page(sid, after, limit)
      }
    }
    const ctl = new AbortController()
    const seqs: number[] = []
    const reading = (async () => {
      for await (const e of store.stream(id, { afterSeq: 0, signal: ctl.signal, highWaterMark: 8 })) {
        seqs.push(e.seq)
        // Slow: while this consumer sleeps, far more than 8 events are appended.
        if (e.seq % 25 === 0) await new Promise((r) => setTimeout(r, 30))
        if (seqs.length === 300) break
      }
    })()
    await appendN(store, id, 1, 300)
    await reading
    ctl.abort()
    expect(seqs).toEqual(range(1, 300))
    // It did fall behind and caught up from the store (the file store serves these from its ring).
    if (!(store instanceof FileEventStore)) expect(reads).toBeGreaterThan(1)
  })

  it('the signal ends the stream', async () => {
    const store = await make()
    const id = await session(store)
    await appendN(store, id, 1, 3)
    const ctl = new AbortController()
    const seen: number[] = []
    const done = (async () => {
      for await (const e of store.stream(id, { signal: ctl.signal })) seen.push(e.seq)
    })()
    await new Promise((r) => setTimeout(r, 50))
    ctl.abort()
    await done
    expect(seen).toEqual([1, 2, 3])
  })

  it('an unknown session is session_not_found', async () => {
    const store = await make()
    const other = sampleMeta('otter').session_id
    await expect(take(store, other, 0, 1)).rejects.toMatchObject({ code: 'session_not_found' })
  })
})

describe('file store ring', () => {
  it('a resume from inside the ring reads nothing from disk; from before it, the directory is read', async () => {
    const root = temp.make('ring-')
    const store = fileStores.open({ root })
    const id = await session(store)
    const total = RING_MAX_EVENTS + 100
    await appendN(store, id, 1, total)
    const reads: number[] = []
    const original = store.readPage.bind(store)
    store.readPage = async (sid: string, after: number, limit?: number) => {
      reads.push(after)
      return original(sid, after, limit)
    }
    expect(await take(store, id, total - 10, 10)).toEqual(range(total - 9, total))
    expect(reads).toEqual([])
    expect(await take(store, id, 5, 20)).toEqual(range(6, 25))
    expect(reads).toEqual([5])
  })
})

describe('memory store bounds', () => {
  it('keeps at most maxEventsPerSession events; a stream from before them reports the gap and continues', async () => {
    const store = new MemoryEventStore({ maxEventsPerSession: 10 })
    const id = await session(store)
    await appendN(store, id, 1, 25)
    const gaps: [number, number][] = []
    const ctl = new AbortController()
    const seqs: number[] = []
    for await (const e of store.stream(id, { afterSeq: 0, signal: ctl.signal, onGap: (a, b) => gaps.push([a, b]) })) {
      seqs.push(e.seq)
      if (e.seq === 25) break
    }
    expect(gaps).toEqual([[1, 15]])
    expect(seqs).toEqual(range(16, 25))
  })

  it('refuses a session past maxSessions with a clear error', async () => {
    const store = new MemoryEventStore({ maxSessions: 2 })
    await session(store)
    await session(store)
    await expect(session(store)).rejects.toMatchObject({ code: 'store_full', message: /maximum of 2 sessions/ })
  })
})
