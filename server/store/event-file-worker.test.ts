/**
 * The event-file thread (event-file-worker.ts): a group written there is what the event loop
 * writes (each file its record, in order, the first failure stopping the rest), an atomic JSON
 * replacement too; synced writes stay on the event loop; a thread that ends before it answers
 * is answered from the progress it recorded, so the store and the event writer go on from what
 * was written; a
 * process whose thread has nothing to write ends on its own; no thread at all, no failed write.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { EventWriter } from '../core/event-writer.ts'
import { initialState } from '../core/state.ts'
import { noopLogger } from '../log.ts'
import { eventFileThread, Progress } from './event-file-worker.ts'
import type { FileEventStore } from './file-store.ts'
import { writeEventFiles, writeJsonAtomic } from './file-log.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { openedStores } from './fixtures/stores.ts'
import { stoppedAt } from './fixtures/thread-stop.ts'
import { eventFileName } from './paths.ts'
import { AppendGroupError } from './types.ts'

const tmp = mkdtempSync(join(tmpdir(), 'chimera-thread-'))
const stores = openedStores()
afterEach(() => stores.closeAll())
afterAll(async () => {
  await eventFileThread.stop()
  rmSync(tmp, { recursive: true, force: true })
})

let n = 0
const freshDir = (): string => {
  const d = join(tmp, `d${++n}`)
  mkdirSync(d)
  return d
}
const names = (dir: string): string[] => readdirSync(dir).sort()

describe.each([
  ['on the event loop', false],
  ['on the thread', true],
] as const)('writes %s', (_where, threaded) => {
  beforeAll(async () => {
    if (threaded) {
      eventFileThread.startAfter = 8
      await eventFileThread.started()
    } else {
      eventFileThread.startAfter = Infinity
      await eventFileThread.stop()
    }
  })
  /** Runs `write` and checks it went where this block says: to the thread or not. */
  async function where<T>(write: () => Promise<T>): Promise<T> {
    const before = eventFileThread.answered
    const out = await write()
    expect(eventFileThread.answered - before).toBe(threaded ? 1 : 0)
    return out
  }

  it('a group: every file created with its record, in order', async () => {
    const dir = freshDir()
    const group = Array.from({ length: 5 }, (_, i) => sampleEvent('otter-x', i + 1))
    const written = await where(() => writeEventFiles(dir, group))
    expect(written).toEqual(group.map((e) => ({ status: 'fulfilled', value: `${JSON.stringify(e)}\n` })))
    expect(names(dir)).toEqual(group.map((e) => eventFileName(e.seq, e.type)).sort())
    for (const e of group)
      expect(readFileSync(join(dir, eventFileName(e.seq, e.type)), 'utf8')).toBe(`${JSON.stringify(e)}\n`)
  })

  it('a file that exists stops the group: the files before it stay, none after it is tried', async () => {
    const dir = freshDir()
    const group = Array.from({ length: 6 }, (_, i) => sampleEvent('otter-x', i + 1))
    const squatter = join(dir, eventFileName(3, group[2]!.type))
    writeFileSync(squatter, 'not ours\n')
    const written = await where(() => writeEventFiles(dir, group))
    expect(written.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
    ])
    expect((written[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'EEXIST' })
    expect(readFileSync(squatter, 'utf8')).toBe('not ours\n')
    expect(names(dir)).toEqual(
      group
        .slice(0, 3)
        .map((e) => eventFileName(e.seq, e.type))
        .sort(),
    )
  })

  it('an atomic JSON replacement: the new file whole; a rename that fails leaves no temporary file', async () => {
    const dir = freshDir()
    const path = join(dir, 'summary.json')
    writeFileSync(path, '{"old":true}\n')
    await where(() => writeJsonAtomic(path, { fresh: [1, 2] }))
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify({ fresh: [1, 2] }, null, 2)}\n`)
    // A directory in the way: the rename is refused, and the error reaches the caller.
    const blocked = join(dir, 'blocked.json')
    mkdirSync(join(blocked, 'inside'), { recursive: true })
    const before = eventFileThread.answered
    const refused = await writeJsonAtomic(blocked, { x: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(eventFileThread.answered - before).toBe(threaded ? 1 : 0)
    expect(refused).toMatchObject({ code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/) })
    expect(names(dir)).toEqual(['blocked.json', 'summary.json'])
  })

  it('a new session: its directory, meta, summary and owner marker, which the store that made it holds; a second create of the id is session_exists', async () => {
    const root = freshDir()
    const store = stores.open({ root })
    const meta = sampleMeta('otter', new Date('2026-04-25T12:03:00Z'))
    await where(() => store.create(meta, sampleSummary(meta)))
    const dir = join(root, meta.session_id)
    // On the thread the marker is taken before the create is answered.
    if (threaded) {
      expect(store.holdsMarker(meta.session_id)).toBe(true)
      expect(existsSync(join(dir, 'owner.json'))).toBe(true)
    }
    // The next step in the session's queue: after the marker on either path.
    await store.append(sampleEvent(meta.session_id, 1))
    expect(store.holdsMarker(meta.session_id)).toBe(true)
    expect(names(dir).filter((n) => !n.startsWith('event-'))).toEqual([
      'events.jsonl',
      'owner.json',
      'session.json',
      'summary.json',
    ])
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toEqual(meta)
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))).toEqual(sampleSummary(meta))
    expect(JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8'))).toMatchObject({
      pid: process.pid,
      host: expect.any(String),
    })
    await expect(store.create(meta, sampleSummary(meta))).rejects.toMatchObject({ code: 'session_exists' })
    const other = await stores.open({ root }).load(meta.session_id)
    expect(other?.events.map((e) => e.seq)).toEqual([1])
  })

  it('synced writes stay on the event loop (synced files of every session would queue on one thread)', async () => {
    const dir = freshDir()
    const group = Array.from({ length: 4 }, (_, i) => sampleEvent('otter-x', i + 1))
    const before = eventFileThread.answered
    const written = await writeEventFiles(dir, group, true)
    await writeJsonAtomic(join(dir, 'summary.json'), { synced: true }, true)
    expect(eventFileThread.answered).toBe(before)
    expect(written.every((r) => r.status === 'fulfilled')).toBe(true)
    expect(names(dir)).toEqual([...group.map((e) => eventFileName(e.seq, e.type)), 'summary.json'].sort())
  })
})

async function newSession(root: string): Promise<{ store: FileEventStore; id: string }> {
  const store = stores.open({ root })
  const meta = sampleMeta('otter', new Date('2026-04-25T12:03:00Z'))
  await store.create(meta, sampleSummary(meta))
  return { store, id: meta.session_id }
}

const eventFiles = (dir: string): string[] => readdirSync(dir).filter((f) => f.startsWith('event-'))

describe('a thread that ends before it answers', () => {
  it.each([
    ['a file it had only created (torn) is removed and not committed', Progress.Created, 19],
    ['a file it had closed is committed', Progress.Closed, 20],
  ] as const)('the store: %s; the next event follows', async (_what, step, committed) => {
    const root = join(tmp, `eventlog-${step}`)
    const { store, id } = await newSession(root)
    const heard: number[] = []
    store.subscribe(id, (e) => heard.push(e.seq))
    const group = Array.from({ length: 40 }, (_, i) => sampleEvent(id, i + 1))
    const twentieth = join(root, id, eventFileName(20, group[19]!.type))
    const err = await stoppedAt(root, 19, step, async () => {
      const result = store.appendMany(group).then(
        () => undefined,
        (e: unknown) => e,
      )
      // The twentieth file exists while the thread waits: the cleanup has something to remove.
      for (let i = 0; i < 1_000_000 && !existsSync(twentieth); i++) await new Promise((r) => setImmediate(r))
      expect(existsSync(twentieth)).toBe(true)
      return result
    })
    expect(err).toBeInstanceOf(AppendGroupError)
    expect((err as AppendGroupError).committed).toBe(committed)
    expect(eventFiles(join(root, id))).toHaveLength(committed)
    expect(heard).toEqual(group.slice(0, committed).map((e) => e.seq))
    await store.append(sampleEvent(id, committed + 1))
    const log = await stores.open({ root }).read(id)
    expect(log).toEqual([...group.slice(0, committed), sampleEvent(id, committed + 1)])
  })

  it('a file it never recorded creating is left alone (another may have made it)', async () => {
    const dir = freshDir()
    const group = Array.from({ length: 3 }, (_, i) => sampleEvent('otter-x', i + 1))
    const first = join(dir, eventFileName(1, group[0]!.type))
    const other = join(dir, eventFileName(2, group[1]!.type))
    const written = await stoppedAt(dir, 0, Progress.Closed, async () => {
      // Made while the thread waits after the first file: not the thread's.
      const result = writeEventFiles(dir, group)
      for (let i = 0; i < 1_000_000 && !existsSync(first); i++) await new Promise((r) => setImmediate(r))
      writeFileSync(other, 'another writer\n')
      return result
    })
    expect(written.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected'])
    expect((written[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'EIO' })
    expect(readFileSync(other, 'utf8')).toBe('another writer\n')
    expect(names(dir)).toEqual([eventFileName(1, group[0]!.type), eventFileName(2, group[1]!.type)].sort())
  })

  it('a new session it was making is not made (EIO) and what it made is removed: nothing is acknowledged, a load finds no session, the id can be made again', async () => {
    // Stopped after the first file was created, after the second was closed, and after the
    // owner marker was taken (the directory's cell, after the files'): it is removed too.
    const cases = [
      [0, Progress.Created],
      [1, Progress.Closed],
      [2, Progress.Closed],
    ] as const
    for (const [i, [file, step]] of cases.entries()) {
      const root = freshDir()
      const store = stores.open({ root })
      const meta = sampleMeta('otter', new Date(Date.UTC(2026, 3, 25, 12, 4, i)))
      const err = await stoppedAt(root, file, step, () =>
        store.create(meta, sampleSummary(meta)).then(
          () => undefined,
          (e: unknown) => e,
        ),
      )
      expect(err, `stopped at file ${file}`).toMatchObject({ code: 'EIO' })
      expect(store.holdsMarker(meta.session_id)).toBe(false)
      expect(existsSync(join(root, meta.session_id))).toBe(false)
      const other = stores.open({ root })
      expect(await other.load(meta.session_id)).toBeUndefined()
      expect(await other.list()).toEqual([])
      await store.create(meta, sampleSummary(meta))
      expect((await store.load(meta.session_id))?.meta).toEqual(meta)
    }
  })

  it('a marker that exists is not taken (another holder): the thread says so and leaves it and no temporary file', async () => {
    eventFileThread.startAfter = 8
    await eventFileThread.started()
    const held = freshDir()
    const marker = join(held, 'owner.json')
    writeFileSync(marker, 'held elsewhere\n')
    const dir = join(freshDir(), 'session')
    const made = await eventFileThread.makeSession({
      dir,
      files: [{ path: join(dir, 'session.json'), text: '{}\n' }],
      marker: { path: marker, tmp: `${marker}.new-test`, text: 'mine\n' },
    })
    expect(made).toEqual({ made: null, marker: false, dirMade: true })
    expect(readFileSync(marker, 'utf8')).toBe('held elsewhere\n')
    expect(names(held)).toEqual(['owner.json'])
    expect(names(dir)).toEqual(['session.json'])
  })

  it('the event writer reports what was written as written and its next events follow them', async () => {
    const root = join(tmp, 'eventlog-writer')
    const { store, id } = await newSession(root)
    const meta = (await store.load(id))!.meta
    const state = initialState({
      session_id: id,
      model: meta.model,
      mode: meta.mode,
      created_at: meta.created_at,
      working_dir: meta.cwd,
    })
    const heard: number[] = []
    const writer = new EventWriter({
      store,
      state,
      sessionId: id,
      logger: noopLogger,
      onEvent: (e) => heard.push(e.seq),
    })
    await stoppedAt(root, 5, Progress.Created, async () => {
      for (let i = 0; i < 100; i++) writer.post('notice', { level: 'info', text: `n${i}` })
      await writer.settled()
    })
    const onDisk = async (): Promise<number[]> => (await stores.open({ root }).read(id)).map((e) => e.seq)
    // Everything on disk was reported written (the notice the stop cut short was lost, and said so).
    expect(heard).toEqual(await onDisk())
    // The thread stopped while it created the group's sixth file: the first five of it are kept.
    expect(heard.length).toBeGreaterThanOrEqual(5)
    const later = await writer.emit('notice', { level: 'info', text: 'later' })
    expect(later.seq).toBe(heard.length)
    expect(await onDisk()).toEqual(heard)
  })

  it.each([
    ['written, not renamed', Progress.Closed],
    ['torn', Progress.Created],
  ] as const)('an atomic replacement cut short (%s): the old file stays, no temporary file', async (_what, step) => {
    const dir = freshDir()
    const path = join(dir, 'state.json')
    writeFileSync(path, '{"old":true}\n')
    const refused = await stoppedAt(dir, 0, step, async () => {
      const result = writeJsonAtomic(path, { fresh: true }).then(
        () => 'replaced',
        (e: unknown) => e,
      )
      // The temporary file exists while the thread waits: the cleanup has something to remove.
      for (let i = 0; i < 1_000_000 && !readdirSync(dir).some((f) => f.endsWith('.tmp')); i++)
        await new Promise((r) => setImmediate(r))
      expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toHaveLength(1)
      return result
    })
    expect(refused).toMatchObject({ code: 'EIO' })
    expect(readFileSync(path, 'utf8')).toBe('{"old":true}\n')
    expect(readdirSync(dir)).toEqual(['state.json'])
  })
})

describe('the process', () => {
  it.each([
    ['after a group written on the thread', 'wrote', 'fulfilled,fulfilled 1'],
    ['with the thread started and nothing written on it', 'idle', 'started'],
  ])('ends on its own %s', async (_what, mode, said) => {
    const dir = freshDir()
    const repo = fileURLToPath(new URL('../..', import.meta.url))
    const fixture = fileURLToPath(new URL('./fixtures/thread-exit.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir, mode], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
      child.once('exit', (c, s) => r([c, s])),
    )
    clearTimeout(timer)
    expect({ code, signal, out: out.trim() }).toEqual({ code: 0, signal: null, out: said })
    if (mode === 'wrote') expect(existsSync(join(dir, eventFileName(2, sampleEvent('otter-x', 2).type)))).toBe(true)
  })
})

describe('no thread', () => {
  it('writes stay on the event loop when a thread cannot be made (and none is tried again)', async () => {
    await eventFileThread.stop()
    eventFileThread.startAfter = 0
    const real = process.getBuiltinModule.bind(process)
    const spy = vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => {
      if (id === 'node:worker_threads')
        throw Object.assign(new Error('Worker initialization failure: EAGAIN'), { code: 'ERR_WORKER_INIT_FAILED' })
      return real(id)
    }) as typeof process.getBuiltinModule)
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    try {
      const dir = freshDir()
      for (let round = 0; round < 3; round++) {
        const group = [sampleEvent('otter-x', 2 * round + 1), sampleEvent('otter-x', 2 * round + 2)]
        const written = await writeEventFiles(dir, group)
        expect(written.every((r) => r.status === 'fulfilled')).toBe(true)
        await writeJsonAtomic(join(dir, 'summary.json'), { round })
      }
      expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))).toEqual({ round: 2 })
      expect(spy.mock.calls.filter(([id]) => id === 'node:worker_threads')).toHaveLength(1)
      expect(warned).toHaveBeenCalledTimes(1)
      await expect(eventFileThread.started()).rejects.toThrow(/could not be started/)
      expect(spy.mock.calls.filter(([id]) => id === 'node:worker_threads')).toHaveLength(1)
    } finally {
      spy.mockRestore()
      warned.mockRestore()
    }
  })
})
