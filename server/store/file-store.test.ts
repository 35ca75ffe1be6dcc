/**
 * FileEventStore: round trip, counter checks, validation, subscriber timing and isolation,
 * concurrent sessions, list filters and order, atomic summaries, hostile ids. Torn-tail repair
 * is in file-store-repair.test.ts; crash safety in crash.test.ts.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import { createLogger } from '../log.ts'
import { writeEventFiles } from './file-log.ts'
import { FileEventStore } from './file-store.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { openedStores } from './fixtures/stores.ts'
import { eventFileName } from './paths.ts'
import type { AgentPrefix } from './types.ts'

let tmp: string
let root: string
let store: FileEventStore
const fileStores = openedStores()
const logLines: string[] = []
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'chimera-fstore-'))
  root = join(tmp, 'eventlog')
  logLines.length = 0
  store = fileStores.open({ root, logger: createLogger({ level: 'debug', sink: (l) => logLines.push(l) }) })
})
afterEach(async () => {
  await fileStores.closeAll()
  rmSync(tmp, { recursive: true, force: true })
})

async function newSession(
  agent: AgentPrefix = 'otter',
  at = new Date('2026-04-25T12:03:00Z'),
  model = 'offline-echo',
): Promise<string> {
  const meta = sampleMeta(agent, at, model)
  await store.create(meta, sampleSummary(meta))
  return meta.session_id
}
const files = (id: string): string[] =>
  readdirSync(join(root, id))
    .filter((n) => n.startsWith('event-'))
    .sort()

/** The descriptors of this process open on a file under `dir` (Linux: /proc/self/fd). */
function fdsUnder(dir: string): string[] {
  const held: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith(`${dir}/`)) held.push(target)
    } catch {
      // closed meanwhile (the descriptor readdir itself used)
    }
  }
  return held
}

describe.runIf(existsSync('/proc/self/fd'))('FileEventStore descriptors', () => {
  it('close() closes the segment append handles (none left for garbage collection)', async () => {
    const ids = [await newSession(), await newSession('otter', new Date('2026-04-25T12:04:00Z'))]
    for (const id of ids) for (let seq = 1; seq <= 3; seq++) await store.append(sampleEvent(id, seq))
    expect(fdsUnder(root).length).toBe(2)
    await store.close()
    expect(fdsUnder(root)).toEqual([])
    // Still usable: the next append opens its segment again, and the events are all there.
    await store.append(sampleEvent(ids[0]!, 4))
    expect(fdsUnder(root).length).toBe(1)
    expect((await store.read(ids[0]!)).map((e) => e.seq)).toEqual([1, 2, 3, 4])
  })
})

describe('FileEventStore round trip', () => {
  it('loads exactly what was appended and reads after a counter', async () => {
    const id = await newSession()
    const sent = Array.from({ length: 12 }, (_, i) => sampleEvent(id, i + 1))
    for (const e of sent) await store.append(e)
    const fresh = fileStores.open({ root })
    const loaded = await fresh.load(id)
    expect(loaded?.repaired).toBe(false)
    expect(loaded?.events).toEqual(sent)
    expect(loaded?.meta.session_id).toBe(id)
    expect(loaded?.summary).toEqual(sampleSummary(loaded!.meta))
    expect(await fresh.read(id, 9)).toEqual(sent.slice(9))
    expect(await fresh.read(id)).toEqual(sent)
    expect(await fresh.read(id, 12)).toEqual([])
    expect(files(id)).toEqual(sent.map((e) => eventFileName(e.seq, e.type)))
    const raw = readFileSync(join(root, id, files(id)[0]!), 'utf8')
    expect(raw).toBe(`${JSON.stringify(sent[0])}\n`)
    await fresh.append(sampleEvent(id, 13))
    expect((await store.read(id, 12)).map((e) => e.seq)).toEqual([13])
  })

  it('returns undefined for a missing session and refuses to create one twice', async () => {
    expect(await store.load('otter-20260425T120300Z-1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b')).toBeUndefined()
    const meta = sampleMeta()
    await store.create(meta, sampleSummary(meta))
    await expect(store.create(meta, sampleSummary(meta))).rejects.toMatchObject({ code: 'session_exists' })
    await expect(
      store.append(sampleEvent('otter-20260425T120300Z-1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b', 1)),
    ).rejects.toMatchObject({ code: 'session_not_found' })
  })
})

describe('FileEventStore counter and validation', () => {
  it('rejects gaps and duplicates and keeps the counter', async () => {
    const id = await newSession()
    await store.append(sampleEvent(id, 1))
    await expect(store.append(sampleEvent(id, 3))).rejects.toMatchObject({ code: 'seq_mismatch' })
    await expect(store.append(sampleEvent(id, 1))).rejects.toThrow(/expected 2/)
    await store.append(sampleEvent(id, 2))
    expect(files(id)).toHaveLength(2)
  })

  it('rejects invalid events and data, writing nothing', async () => {
    const id = await newSession()
    const good = sampleEvent(id, 1, 'text_delta')
    const bad: unknown[] = [
      { ...good, data: { text: 42 } },
      { ...good, data: { prompt: 'a turn_start payload on a text_delta' } },
      { ...good, type: 'no_such_type' },
      { ...good, extra: true },
      { ...good, seq: 0 },
      { ...good, ts: 'yesterday' },
      { ...good, session_id: '../escape' },
    ]
    for (const e of bad) await expect(store.append(e as AnyEvent)).rejects.toThrow(/invalid/)
    expect(files(id)).toEqual([])
    await store.append(good)
    expect(files(id)).toHaveLength(1)
  })
})

describe('FileEventStore subscribers', () => {
  it('are notified in order, only after the file exists', async () => {
    const id = await newSession()
    const seen: number[] = []
    const unsubscribe = store.subscribe(id, (e) => {
      expect(existsSync(join(root, id, eventFileName(e.seq, e.type)))).toBe(true)
      seen.push(e.seq)
    })
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(sampleEvent(id, i + 1))))
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    unsubscribe()
    await store.append(sampleEvent(id, 21))
    expect(seen).toHaveLength(20)
  })

  it('a throwing listener breaks neither the append nor other listeners', async () => {
    const id = await newSession()
    const seen: number[] = []
    store.subscribe(id, () => {
      throw new Error('listener boom')
    })
    store.subscribe(id, async () => {
      throw new Error('async listener boom')
    })
    store.subscribe(id, (e) => seen.push(e.seq))
    await store.append(sampleEvent(id, 1))
    await store.append(sampleEvent(id, 2))
    await new Promise((r) => setImmediate(r))
    expect(seen).toEqual([1, 2])
    expect(logLines.filter((l) => l.includes('listener boom'))).toHaveLength(4)
  })
})

describe('FileEventStore group commit (appendMany)', () => {
  it('writes a group as its event files and one run of segment lines, notifying in order once all are on disk', async () => {
    const id = await newSession()
    await store.append(sampleEvent(id, 1))
    const heard: number[] = []
    store.subscribe(id, (e) => {
      // Every file of the group is on disk before the first of it is heard of.
      expect(files(id)).toHaveLength(6)
      heard.push(e.seq)
    })
    const group = Array.from({ length: 5 }, (_, i) => sampleEvent(id, i + 2))
    await store.appendMany(group)
    expect(heard).toEqual([2, 3, 4, 5, 6])
    const all = [sampleEvent(id, 1), ...group]
    expect(files(id)).toEqual(all.map((e) => eventFileName(e.seq, e.type)))
    expect(readFileSync(join(root, id, 'events.jsonl'), 'utf8')).toBe(all.map((e) => `${JSON.stringify(e)}\n`).join(''))
    const fresh = fileStores.open({ root })
    expect((await fresh.load(id))?.events).toEqual(all)
    await expect(store.appendMany([sampleEvent(id, 8), sampleEvent(id, 9)])).rejects.toMatchObject({
      code: 'seq_mismatch',
    })
  })

  it('a file that cannot be written ends the group there: the files after it are taken back, the log stays a prefix', async () => {
    const id = await newSession()
    const group = Array.from({ length: 5 }, (_, i) => sampleEvent(id, i + 1))
    // Something already holds the third record's name: its exclusive create fails.
    const squatter = join(root, id, eventFileName(3, group[2]!.type))
    writeFileSync(squatter, 'not ours\n')
    const heard: number[] = []
    store.subscribe(id, (e) => heard.push(e.seq))
    await expect(store.appendMany(group)).rejects.toMatchObject({ name: 'AppendGroupError', committed: 2 })
    expect(heard).toEqual([1, 2])
    expect(files(id)).toEqual([
      ...group.slice(0, 2).map((e) => eventFileName(e.seq, e.type)),
      eventFileName(3, group[2]!.type),
    ])
    rmSync(squatter)
    // The counter continues after the prefix.
    await store.appendMany(group.slice(2))
    expect(await fileStores.open({ root }).read(id)).toEqual(group)
  })

  it('a group opens its files one after another, in order: after a failed open no later file is tried', async () => {
    const id = await newSession()
    const dir = join(root, id)
    const group = Array.from({ length: 40 }, (_, i) => sampleEvent(id, i + 1))
    writeFileSync(join(dir, eventFileName(3, group[2]!.type)), 'not ours\n')
    const written = await writeEventFiles(dir, group)
    expect(written.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      ...Array.from({ length: 38 }, () => 'rejected'),
    ])
    expect((written[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'EEXIST' })
    expect(files(id)).toEqual(group.slice(0, 3).map((e) => eventFileName(e.seq, e.type)))
    expect(written[0]).toEqual({ status: 'fulfilled', value: `${JSON.stringify(group[0])}\n` })
  })
})

describe('FileEventStore concurrency', () => {
  it('two sessions appending concurrently keep independent counters', async () => {
    const a = await newSession('otter')
    const b = await newSession('ferret')
    const n = 40
    await Promise.all(
      Array.from({ length: n }, (_, i) => [
        store.append(sampleEvent(a, i + 1)),
        store.append(sampleEvent(b, i + 1)),
      ]).flat(),
    )
    for (const id of [a, b]) {
      const loaded = await fileStores.open({ root }).load(id)
      expect(loaded?.events.map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1))
      expect(loaded?.events.every((e) => e.session_id === id)).toBe(true)
    }
  })
})

describe('FileEventStore list', () => {
  it('filters by agents, since, model, modelContains and limit, newest first', async () => {
    const o1 = await newSession('otter', new Date('2026-04-01T00:00:00Z'), 'claude-sonnet-4')
    const o2 = await newSession('otter', new Date('2026-04-20T00:00:00Z'), 'gpt-5')
    const f1 = await newSession('ferret', new Date('2026-04-10T00:00:00Z'), 'Claude-Opus')
    const m1 = await newSession('mink', new Date('2026-04-15T00:00:00Z'), 'offline-echo')
    mkdirSync(join(root, 'not-a-session'))
    mkdirSync(join(root, 'otter-20260425T120300Z-1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b')) // no files at all
    const ids = async (f?: Parameters<FileEventStore['list']>[0]) => (await store.list(f)).map((s) => s.session_id)
    expect(await ids()).toEqual([o2, m1, f1, o1])
    expect(await ids({ agents: ['otter'] })).toEqual([o2, o1])
    expect(await ids({ agents: ['ferret', 'mink'] })).toEqual([m1, f1])
    expect(await ids({ since: new Date('2026-04-10T00:00:00Z') })).toEqual([o2, m1, f1])
    expect(await ids({ model: 'gpt-5' })).toEqual([o2])
    expect(await ids({ model: 'GPT-5' })).toEqual([])
    expect(await ids({ modelContains: 'CLAUDE' })).toEqual([f1, o1])
    expect(await ids({ modelContains: 'all' })).toEqual([o2, m1, f1, o1])
    expect(await ids({ limit: 2 })).toEqual([o2, m1])
    expect(await ids({ limit: 0 })).toEqual([])
    expect(logLines.some((l) => l.includes('skipping unreadable session directory'))).toBe(true)
  })

  it('falls back to meta when summary.json is damaged, and returns [] without a root', async () => {
    expect(await store.list()).toEqual([])
    const id = await newSession('mink', new Date('2026-04-15T00:00:00Z'))
    writeFileSync(join(root, id, 'summary.json'), '{"session_id": tru')
    const [s] = await store.list()
    expect(s).toMatchObject({ session_id: id, model: 'offline-echo', started_at: '2026-04-15T00:00:00.000Z' })
    const loaded = await store.load(id)
    expect(loaded?.summary).toMatchObject({ session_id: id, event_count: 0 })
    expect(JSON.parse(readFileSync(join(root, id, 'summary.json'), 'utf8'))).toEqual(loaded?.summary)
  })
})

describe('FileEventStore summary', () => {
  it('is replaced atomically by rename, never seen half-written', async () => {
    const id = await newSession()
    const path = join(root, id, 'summary.json')
    // Held open, the first file keeps its inode number: once freed, a file system may hand the
    // number to a later replacement, and a file truly replaced would then look rewritten in place.
    const original = readFileSync(path, 'utf8')
    const held = openSync(path, 'r')
    try {
      await replacedAtomically(id, path, held, original)
    } finally {
      closeSync(held)
    }
  })

  async function replacedAtomically(id: string, path: string, held: number, original: string): Promise<void> {
    const before = fstatSync(held).ino
    const big = (n: number) => ({ session_id: id, model: 'offline-echo', prompt: String(n).repeat(200_000) })
    let reads = 0
    let writing = true
    const reader = (async () => {
      while (writing) {
        const text = readFileSync(path, 'utf8')
        expect(() => JSON.parse(text)).not.toThrow()
        reads++
        await new Promise((r) => setImmediate(r))
      }
    })()
    for (let n = 1; n <= 9; n++) await store.writeSummary(id, big(n))
    writing = false
    await reader
    expect(reads).toBeGreaterThan(0)
    expect(statSync(path).ino).not.toBe(before)
    // The first file was replaced, never written into.
    expect(readFileSync(held, 'utf8')).toBe(original)
    expect(JSON.parse(readFileSync(path, 'utf8')).prompt).toBe('9'.repeat(200_000))
    expect(readdirSync(join(root, id)).filter((n) => n.includes('.tmp'))).toEqual([])
    await expect(store.writeSummary(id, { session_id: 'otter-x' })).rejects.toMatchObject({ code: 'invalid_summary' })
  }

  it('summary writes sent together beside appends land in the order sent; a removal amid them leaves nothing behind', async () => {
    const id = await newSession()
    const writes: Promise<void>[] = []
    for (let n = 1; n <= 20; n++) {
      writes.push(store.append(sampleEvent(id, n)))
      writes.push(store.writeSummary(id, { session_id: id, model: 'offline-echo', prompt: `p${n}` }))
    }
    await Promise.all(writes)
    expect(JSON.parse(readFileSync(join(root, id, 'summary.json'), 'utf8')).prompt).toBe('p20')
    expect(files(id)).toHaveLength(20)
    // A session not opened by this instance: its summary write opens it first (through its queue).
    const other = fileStores.open({ root })
    await other.writeSummary(id, { session_id: id, model: 'offline-echo', prompt: 'other' })
    expect(JSON.parse(readFileSync(join(root, id, 'summary.json'), 'utf8')).prompt).toBe('other')
    const late = Array.from({ length: 5 }, (_, i) =>
      other.writeSummary(id, { session_id: id, model: 'offline-echo', prompt: `late${i}` }),
    )
    const settled = Promise.allSettled(late)
    await other.remove(id)
    for (const r of await settled)
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'session_not_found' })
    expect(existsSync(join(root, id))).toBe(false)
  })
})

describe('FileEventStore hostile ids', () => {
  const hostile = [
    '..',
    '../outside',
    'otter-20260425T120300Z-../../outside',
    'a/b',
    'a\\b',
    'otter\0',
    '',
    '.',
    `otter-20260425T120300Z-1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b/..`,
  ]
  it('are rejected by load, read, remove and subscribe without touching the filesystem', async () => {
    const outside = join(tmp, 'outside')
    mkdirSync(join(outside, 'victim'), { recursive: true })
    writeFileSync(join(outside, 'session.json'), '{}')
    await newSession()
    for (const id of hostile) {
      await expect(store.load(id)).rejects.toMatchObject({ code: 'invalid_session_id' })
      await expect(store.read(id)).rejects.toMatchObject({ code: 'invalid_session_id' })
      await expect(store.remove(id)).rejects.toMatchObject({ code: 'invalid_session_id' })
      await expect(store.writeSummary(id, { session_id: 'x' })).rejects.toMatchObject({ code: 'invalid_session_id' })
      expect(() => store.subscribe(id, () => {})).toThrow(/invalid session id/)
    }
    expect(existsSync(join(outside, 'victim'))).toBe(true)
    expect(readdirSync(tmp).sort()).toEqual(['eventlog', 'outside'])
  })

  it('remove deletes a real session directory', async () => {
    const id = await newSession()
    await store.append(sampleEvent(id, 1))
    await store.remove(id)
    expect(existsSync(join(root, id))).toBe(false)
    expect(await store.load(id)).toBeUndefined()
    await expect(store.append(sampleEvent(id, 2))).rejects.toMatchObject({ code: 'session_not_found' })
  })
})
