/**
 * A group's segment lines are appended by the event-file thread, in the request that creates its
 * event files (file-store.ts `appendMany`, event-file-worker.ts `appendTo`): no append of its own on
 * the event loop, the segment byte for byte the records; a thread that ends before it answers, or
 * a segment that will not open, leaves the events written and the segment untrusted until the
 * session is opened again, which makes it the log once more.
 */
import {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger } from '../log.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { eventFileThread, Progress } from './event-file-worker.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { openedStores } from './fixtures/stores.ts'
import { stoppedAt } from './fixtures/thread-stop.ts'
import { eventFileName } from './paths.ts'
import { SEGMENT_FILE, SegmentWriters } from './segment.ts'

/** Descriptors of the segment handles closed so far (`open` wrapped: each handle's close is recorded). */
const closedFds = vi.hoisted(() => new Set<number>())
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...real,
    open: async (...args: Parameters<typeof real.open>) => {
      const fh = await real.open(...args)
      const { fd } = fh
      const close = fh.close.bind(fh)
      fh.close = () => (closedFds.add(fd), close())
      return fh
    },
  }
})

const tmp = mkdtempSync(join(tmpdir(), 'chimera-segment-thread-'))
const stores = openedStores()
let warnings: string[] = []
const logger = createLogger({ level: 'warn', sink: (line) => warnings.push(line) })
let n = 0
beforeEach(async () => {
  warnings = []
  eventFileThread.startAfter = 8
  await eventFileThread.started()
})
afterEach(async () => {
  vi.restoreAllMocks()
  await stores.closeAll()
})
afterAll(async () => {
  await eventFileThread.stop()
  rmSync(tmp, { recursive: true, force: true })
})

async function newSession() {
  const root = join(tmp, `eventlog-${++n}`)
  const store = stores.open({ root, logger })
  const meta = sampleMeta('otter', new Date(Date.UTC(2026, 3, 25, 12, 3, n)))
  await store.create(meta, sampleSummary(meta))
  const id = meta.session_id
  return { root, store, id, segment: join(root, id, SEGMENT_FILE) }
}
const records = (events: readonly AnyEvent[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join('')
const group = (id: string, from: number, count: number): AnyEvent[] =>
  Array.from({ length: count }, (_, i) => sampleEvent(id, from + i))

describe('the segment lines of a group', () => {
  it('are appended by the thread with the files: one answer per group, no append on the event loop', async () => {
    const { store, id, segment } = await newSession()
    const appends = vi.spyOn(SegmentWriters.prototype, 'append')
    const answered = eventFileThread.answered
    const all = [...group(id, 1, 3), ...group(id, 4, 5), ...group(id, 9, 2)]
    await store.appendMany(all.slice(0, 3))
    await store.appendMany(all.slice(3, 8))
    await store.appendMany(all.slice(8))
    expect(eventFileThread.answered - answered).toBe(3)
    expect(appends).not.toHaveBeenCalled()
    expect(readFileSync(segment, 'utf8')).toBe(records(all))
    expect(await store.read(id)).toEqual(all)
    expect(await store.read(id, 7)).toEqual(all.slice(7))
    expect(warnings).toEqual([])
  })

  it('a single event goes to the thread with its line too, once it runs; a synced store keeps both on the event loop', async () => {
    const { store, id, segment } = await newSession()
    const appends = vi.spyOn(SegmentWriters.prototype, 'append')
    const answered = eventFileThread.answered
    const all = group(id, 1, 4)
    for (const e of all) await store.append(e)
    expect(eventFileThread.answered - answered).toBe(4)
    expect(appends).not.toHaveBeenCalled()
    expect(readFileSync(segment, 'utf8')).toBe(records(all))
    expect(await store.read(id, 2)).toEqual(all.slice(2))
    // The next one exists already (another writer's): refused as before, the segment unchanged.
    const taken = sampleEvent(id, 5)
    writeFileSync(join(segment, '..', eventFileName(5, taken.type)), 'another writer\n')
    await expect(store.append(taken)).rejects.toMatchObject({ code: 'EEXIST' })
    expect(readFileSync(segment, 'utf8')).toBe(records(all))

    const synced = stores.open({ root: join(tmp, `eventlog-synced-${++n}`), logger, fsync: true })
    const meta = sampleMeta('otter', new Date(Date.UTC(2026, 3, 25, 12, 5, n)))
    await synced.create(meta, sampleSummary(meta))
    const before = eventFileThread.answered
    await synced.append(sampleEvent(meta.session_id, 1))
    expect(eventFileThread.answered).toBe(before)
    expect(appends).toHaveBeenCalledTimes(1)
  })

  it('a thread that ends after the files, before its answer: the events are written, the segment is not trusted, a reopen makes it the log', async () => {
    const { root, store, id, segment } = await newSession()
    const first = group(id, 1, 4)
    await store.appendMany(first)
    const second = group(id, 5, 3)
    // Stopped once the last file of the group is closed: the append is never made.
    await stoppedAt(root, 2, Progress.Closed, () => store.appendMany(second))
    expect(readFileSync(segment, 'utf8')).toBe(records(first))
    expect(warnings.join('\n')).toContain('segment append failed')
    await eventFileThread.started()
    const third = group(id, 8, 2)
    await store.appendMany(third)
    const all = [...first, ...second, ...third]
    // Read from the event files (the segment stops after the first group).
    expect(await store.read(id)).toEqual(all)
    expect(await store.read(id, 5)).toEqual(all.slice(5))
    await store.close()
    // Opened for writing again: the segment is made the log, and the next group follows it.
    const again = stores.open({ root, logger })
    const fourth = group(id, 10, 2)
    await again.appendMany(fourth)
    expect(readFileSync(segment, 'utf8')).toBe(records([...all, ...fourth]))
    expect(await again.read(id)).toEqual([...all, ...fourth])
  })

  it('a single event queued behind a request when the thread ends: never begun, so written on the event loop, once', async () => {
    const a = await newSession()
    const b = await newSession()
    const first = sampleEvent(b.id, 1)
    await b.store.append(first)
    const writes = vi.spyOn(eventFileThread, 'write')
    const gate = new Int32Array(new SharedArrayBuffer(4))
    eventFileThread.pauseNext = { file: 0, step: Progress.Created, gate, under: a.root }
    const stuck = a.store.appendMany(group(a.id, 1, 2)).catch((e: unknown) => e)
    for (let i = 0; i < 1_000_000 && Atomics.load(gate, 0) !== 1; i++) await new Promise((r) => setImmediate(r))
    // B's single event is sent to the thread, which is held in A's request: it waits behind it.
    const second = sampleEvent(b.id, 2)
    const single = b.store.append(second)
    for (let i = 0; i < 1_000_000 && writes.mock.calls.length < 2; i++) await new Promise((r) => setImmediate(r))
    expect(writes).toHaveBeenCalledTimes(2)
    await eventFileThread.stop()
    await stuck
    await single
    expect(await b.store.read(b.id)).toEqual([first, second])
    expect(readFileSync(b.segment, 'utf8').split('\n')).toHaveLength(3)
  })

  it('a segment that will not open: the group is written all the same, and read from its files', async () => {
    const { root, store, id, segment } = await newSession()
    const first = group(id, 1, 3)
    await store.appendMany(first)
    await store.close()
    // The segment replaced by a directory: opening it for append fails (EISDIR).
    rmSync(segment)
    mkdirSync(segment)
    const reopened = stores.open({ root, logger })
    const second = group(id, 4, 3)
    await reopened.appendMany(second)
    expect(await reopened.read(id)).toEqual([...first, ...second])
    expect(warnings.join('\n')).toMatch(/segment/)
  })
})

describe('the thread and the lent descriptor', () => {
  it('the thread says when its append fails (a descriptor it cannot write): the files are written all the same', async () => {
    const dir = join(tmp, `lent-${++n}`)
    mkdirSync(dir)
    writeFileSync(join(dir, SEGMENT_FILE), '')
    const readOnly = openSync(join(dir, SEGMENT_FILE), 'r')
    try {
      const r = await eventFileThread.write(
        [
          { path: join(dir, 'a'), text: 'a\n' },
          { path: join(dir, 'b'), text: 'b\n' },
        ],
        readOnly,
      )
      expect(r.failures).toEqual([null, null])
      expect(r.appended).toMatchObject({ code: 'EBADF' })
      expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('b\n')
      expect(readFileSync(join(dir, SEGMENT_FILE), 'utf8')).toBe('')
    } finally {
      closeSync(readOnly)
    }
  })

  /** A lend whose write waits for `release()`; `fd` is the descriptor it was lent. */
  function gatedLend(writers: SegmentWriters, dir: string) {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let fd = -1
    const done = writers.lend(
      dir,
      async (lent) => {
        fd = lent
        await gate
        return { appended: null }
      },
      (r) => r.appended !== null,
    )
    return { done, release, fd: () => fd }
  }
  const segmentDir = (): string => {
    const dir = join(tmp, `lent-${++n}`)
    mkdirSync(dir)
    return dir
  }
  const sameFile = (fd: number, dir: string): boolean => {
    try {
      return fstatSync(fd).ino === statSync(join(dir, SEGMENT_FILE)).ino
    } catch {
      return false
    }
  }

  it.each([
    ['closing every handle', (w: SegmentWriters) => w.closeAll()],
    ['a handle evicted by another session', (w: SegmentWriters) => w.append(segmentDir(), 'x\n')],
    ['closing its session', (w: SegmentWriters, dir: string) => w.close(dir)],
  ])('a lent descriptor stays open until the lent write settles: %s waits for it', async (_what, closing) => {
    closedFds.clear()
    const writers = new SegmentWriters(1)
    const dir = segmentDir()
    const lent = gatedLend(writers, dir)
    for (let i = 0; i < 1000 && lent.fd() < 0; i++) await new Promise((r) => setImmediate(r))
    const closed = closing(writers, dir)
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
    expect(closedFds.has(lent.fd())).toBe(false)
    expect(sameFile(lent.fd(), dir)).toBe(true)
    lent.release()
    await lent.done
    await closed
    await writers.closeAll()
    expect(closedFds.has(lent.fd())).toBe(true)
    expect(sameFile(lent.fd(), dir)).toBe(false)
  })

  it('a handle whose lent append failed is not lent again: the next lend opens the file anew', async () => {
    const writers = new SegmentWriters()
    const dir = segmentDir()
    let first = -1
    await writers.lend(
      dir,
      async (fd) => ((first = fd), { appended: new Error('failed') }),
      (r) => r.appended !== null,
    )
    // The file replaced: only a new open reaches the new one.
    writeFileSync(join(dir, 'new'), '')
    renameSync(join(dir, 'new'), join(dir, SEGMENT_FILE))
    let second = -1
    await writers.lend(
      dir,
      async (fd) => ((second = fd), { appended: null }),
      (r) => r.appended !== null,
    )
    expect(first).toBeGreaterThanOrEqual(0)
    expect(sameFile(second, dir)).toBe(true)
    await writers.closeAll()
  })
})
