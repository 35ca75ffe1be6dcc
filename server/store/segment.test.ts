/**
 * The derived segment `events.jsonl` of the file store (docs/decisions/0130-event-segment.md):
 * it holds exactly the event files' records; a torn, short, long or disagreeing segment is cut
 * and rebuilt from the event files when a session is opened (the events returned are always
 * the event files'); repair keeps it in step; a segment that cannot be written or read costs
 * speed only; reads and streams page through it with no gap or duplicate.
 */
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { FileEventStore } from './file-store.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { eventFileName } from './paths.ts'
import { RING_MAX_EVENTS } from './recent-ring.ts'
import { SEGMENT_FILE } from './segment.ts'
import { storedEvent } from './stored-lines.ts'
import { openedStores } from './fixtures/stores.ts'

const fileStores = openedStores()
afterEach(() => fileStores.closeAll())

const temp = tempDirs()
let root: string
let id: string
let sent: AnyEvent[]
const dir = (): string => join(root, id)
const segment = (): string => readFileSync(join(dir(), SEGMENT_FILE), 'utf8')
const record = (e: AnyEvent): string => `${JSON.stringify(e)}\n`
/** The event files' records in counter order: what the segment must equal. */
const fromFiles = (): string =>
  readdirSync(dir())
    .filter((n) => n.startsWith('event-'))
    .sort()
    .map((n) => readFileSync(join(dir(), n), 'utf8'))
    .join('')
const seqs = (es: AnyEvent[]): number[] => es.map((e) => e.seq)
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i)

async function newSession(store: FileEventStore, n: number): Promise<void> {
  const meta = sampleMeta('otter')
  id = meta.session_id
  await store.create(meta, sampleSummary(meta))
  sent = Array.from({ length: n }, (_, i) => sampleEvent(id, i + 1))
  for (const e of sent) await store.append(e)
}

beforeEach(async () => {
  root = temp.make('segment-')
  await newSession(fileStores.open({ root }), 8)
})
afterEach(() => temp.cleanup())

/** A fresh store loads exactly `want` (unrepaired), and the segment equals the event files. */
async function expectLoadsAndHeals(want: AnyEvent[]): Promise<FileEventStore> {
  const store = fileStores.open({ root })
  const loaded = await store.load(id)
  expect(loaded?.repaired).toBe(false)
  expect(loaded?.events).toEqual(want)
  expect(segment()).toBe(fromFiles())
  expect(await store.read(id)).toEqual(want)
  return store
}

describe('segment contents', () => {
  it('holds each event file record, byte for byte, in counter order', () => {
    expect(segment()).toBe(sent.map(record).join(''))
    expect(segment()).toBe(fromFiles())
  })

  it('a session with no events has no segment until its first append', async () => {
    const store = fileStores.open({ root })
    const meta = sampleMeta('ferret')
    await store.create(meta, sampleSummary(meta))
    expect(readdirSync(join(root, meta.session_id))).not.toContain(SEGMENT_FILE)
    await store.append(sampleEvent(meta.session_id, 1))
    expect(readFileSync(join(root, meta.session_id, SEGMENT_FILE), 'utf8')).toBe(
      record(sampleEvent(meta.session_id, 1)),
    )
  })
})

describe('segment verified on open', () => {
  it('torn last line (a crash mid-append): cut and rebuilt from the event files', async () => {
    truncateSync(join(dir(), SEGMENT_FILE), Buffer.byteLength(segment()) - 7)
    await expectLoadsAndHeals(sent)
  })

  it('behind the event files (a crash between event file and segment line): completed', async () => {
    const lines = segment().split('\n')
    writeFileSync(join(dir(), SEGMENT_FILE), `${lines.slice(0, 5).join('\n')}\n`)
    await expectLoadsAndHeals(sent)
  })

  it('missing altogether (a log written before the segment existed): built', async () => {
    unlinkSync(join(dir(), SEGMENT_FILE))
    await expectLoadsAndHeals(sent)
  })

  it('ahead of the event files (their last records gone): cut to the event files', async () => {
    unlinkSync(join(dir(), eventFileName(8, sent[7]!.type)))
    unlinkSync(join(dir(), eventFileName(7, sent[6]!.type)))
    await expectLoadsAndHeals(sent.slice(0, 6))
  })

  it('a line that disagrees with its event file (other counter, type or session; not JSON): cut there, rebuilt from the files', async () => {
    const lines = segment().split('\n')
    for (const bad of [
      record(sampleEvent(id, 9)).trimEnd(),
      JSON.stringify({ ...sent[3], type: 'usage' }),
      JSON.stringify({ ...sent[3], session_id: 'x' }),
      '{"seq":4,',
      '4',
    ]) {
      lines[3] = bad
      writeFileSync(join(dir(), SEGMENT_FILE), lines.join('\n'))
      await expectLoadsAndHeals(sent)
    }
  })

  it('trailing garbage after the last line: cut', async () => {
    appendFileSync(join(dir(), SEGMENT_FILE), 'garbage')
    await expectLoadsAndHeals(sent)
    appendFileSync(join(dir(), SEGMENT_FILE), `${record(sampleEvent(id, 9))}`)
    await expectLoadsAndHeals(sent)
  })

  it('appends after a heal keep it equal to the event files', async () => {
    truncateSync(join(dir(), SEGMENT_FILE), 10)
    const store = await expectLoadsAndHeals(sent)
    await store.append(sampleEvent(id, 9))
    expect(segment()).toBe(fromFiles())
    expect(seqs((await fileStores.open({ root }).load(id))!.events)).toEqual(range(1, 9))
  })
})

describe('segment and repair', () => {
  it('a torn event file after the segment is quarantined; the segment stays the valid prefix and grows on', async () => {
    writeFileSync(join(dir(), eventFileName(9, 'text_delta')), '{"seq":9,')
    const store = fileStores.open({ root })
    const loaded = await store.load(id)
    expect(loaded?.repaired).toBe(true)
    expect(loaded?.events).toEqual(sent)
    expect(segment()).toBe(fromFiles())
    await store.append(sampleEvent(id, 9, 'usage'))
    expect(segment()).toBe(fromFiles())
    expect(seqs(await fileStores.open({ root }).read(id))).toEqual(range(1, 9))
  })

  it('a gap in the event files ends the log there; the segment is cut with it', async () => {
    // Event 5 moved away by hand: 6..8 follow a gap and are quarantined.
    renameSync(join(dir(), eventFileName(5, sent[4]!.type)), join(root, 'away.json'))
    const loaded = await fileStores.open({ root }).load(id)
    expect(loaded?.repaired).toBe(true)
    expect(seqs(loaded!.events)).toEqual(range(1, 4))
    expect(segment()).toBe(fromFiles())
  })
})

describe('segment failures cost speed, not events', () => {
  it('a segment that cannot be written: appends still persist; reads come from the event files', async () => {
    const store = fileStores.open({ root })
    const meta = sampleMeta('mink')
    await store.create(meta, sampleSummary(meta))
    mkdirSync(join(root, meta.session_id, SEGMENT_FILE))
    const events = Array.from({ length: 5 }, (_, i) => sampleEvent(meta.session_id, i + 1))
    for (const e of events) await store.append(e)
    expect(await store.read(meta.session_id, 2)).toEqual(events.slice(2))
    const fresh = fileStores.open({ root })
    expect((await fresh.load(meta.session_id))?.events).toEqual(events)
    await fresh.append(sampleEvent(meta.session_id, 6))
    expect(seqs(await fresh.read(meta.session_id))).toEqual(range(1, 6))
  })

  it('a segment removed under an open session: reads fall back to the event files', async () => {
    const store = fileStores.open({ root })
    await store.load(id)
    rmSync(join(dir(), SEGMENT_FILE))
    expect(await store.read(id, 3)).toEqual(sent.slice(3))
    await store.append(sampleEvent(id, 9))
    expect(seqs(await store.read(id, 6))).toEqual([7, 8, 9])
  })

  it('an event appended by another store instance is read from its file', async () => {
    const a = fileStores.open({ root })
    const b = fileStores.open({ root })
    await a.load(id)
    await b.append(sampleEvent(id, 9))
    expect(seqs(await a.read(id, 7))).toEqual([8, 9])
  })
})

describe('stored records for a replay', () => {
  it('come from the verified segment, a page at a time, never past the bound', async () => {
    const store = fileStores.open({ root })
    await store.load(id)
    const page = await store.readStored(id, 2, 6)
    expect(page?.more).toBe(false)
    expect(page?.records.map((r) => storedEvent(r, id))).toEqual(sent.slice(2, 6))
    expect(await store.readStored(id, 6, 6)).toBeUndefined()
    expect(await store.readStored(id, 8, 100)).toBeUndefined()
  })

  it('events the store holds in memory are not read from the segment (the stream sends those), older ones are', async () => {
    const store = fileStores.open({ root })
    const more = Array.from({ length: RING_MAX_EVENTS }, (_, i) => sampleEvent(id, i + 9))
    await store.appendMany(more)
    const last = 8 + RING_MAX_EVENTS
    // The writer's ring holds the last RING_MAX_EVENTS: a cursor inside it is served from memory.
    expect(await store.readStored(id, 8, last)).toBeUndefined()
    expect(await store.readStored(id, last - 3, last)).toBeUndefined()
    const page = await store.readStored(id, 2, 6)
    expect(page?.records.map((r) => storedEvent(r, id))).toEqual(sent.slice(2, 6))
  })

  it('a segment changed under an open session is not sent; the events come from their files', async () => {
    const store = fileStores.open({ root })
    await store.load(id)
    const text = segment()
    const nl = text.indexOf('\n', text.indexOf('\n') + 1)
    writeFileSync(join(dir(), SEGMENT_FILE), `${text.slice(0, nl)} ${text.slice(nl + 1)}`)
    expect(await store.readStored(id, 0, 8)).toBeUndefined()
    expect(await store.read(id)).toEqual(sent)
  })
})

describe('a new session', () => {
  it('streams its first events live, without reading storage', async () => {
    const store = fileStores.open({ root })
    const meta = sampleMeta('ferret')
    await store.create(meta, sampleSummary(meta))
    const pages: number[] = []
    const readPage = store.readPage.bind(store)
    store.readPage = async (sid: string, after: number, limit?: number) => {
      pages.push(after)
      return readPage(sid, after, limit)
    }
    const ctl = new AbortController()
    const got: number[] = []
    const it = store.stream(meta.session_id, { signal: ctl.signal })[Symbol.asyncIterator]()
    const first = it.next()
    for (let seq = 1; seq <= 3; seq++) await store.append(sampleEvent(meta.session_id, seq))
    got.push((await first).value!.seq, (await it.next()).value!.seq, (await it.next()).value!.seq)
    ctl.abort()
    await it.return?.()
    expect(got).toEqual([1, 2, 3])
    expect(pages).toEqual([])
  })
})

describe('paged reads', () => {
  it('pages bounded by count, `more` until the end, then empty; every event once, in order', async () => {
    const store = fileStores.open({ root })
    await newSession(store, 300)
    const fresh = fileStores.open({ root })
    await fresh.load(id)
    const got: AnyEvent[] = []
    const sizes: number[] = []
    for (let cursor = 0, more = true; more;) {
      const page = await fresh.readPage(id, cursor, 128)
      sizes.push(page.events.length)
      got.push(...page.events)
      cursor = page.events.at(-1)?.seq ?? cursor
      more = page.more
    }
    expect(sizes).toEqual([128, 128, 44])
    expect(got).toEqual(sent)
    expect(await fresh.readPage(id, 300, 10)).toEqual({ events: [], more: false })
    expect(seqs((await fresh.readPage(id, 295, 3)).events)).toEqual([296, 297, 298])
  })

  it('a stream from 0 over many pages, with appends landing meanwhile, sees each event exactly once', async () => {
    // More events than the recent ring holds, so the catch-up starts with pages from disk.
    await newSession(fileStores.open({ root }), RING_MAX_EVENTS + 200)
    const store = fileStores.open({ root, pageEvents: 32 })
    const pages: number[] = []
    const readPage = store.readPage.bind(store)
    store.readPage = async (sid: string, after: number, limit?: number) => {
      pages.push(after)
      return readPage(sid, after, limit)
    }
    const ctl = new AbortController()
    const got: number[] = []
    const total = RING_MAX_EVENTS + 280
    let next = RING_MAX_EVENTS + 201
    for await (const e of store.stream(id, { afterSeq: 0, signal: ctl.signal })) {
      got.push(e.seq)
      // Appends interleave with the catch-up pages (not awaited: they queue behind the reads).
      if (next <= total && e.seq % 100 === 0)
        for (let k = 0; k < 20 && next <= total; k++) void store.append(sampleEvent(id, next++))
      if (e.seq === total) break
    }
    ctl.abort()
    expect(got).toEqual(range(1, total))
    expect(pages.slice(0, 3)).toEqual([0, 32, 64])
  })
})
