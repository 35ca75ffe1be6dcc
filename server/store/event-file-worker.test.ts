/**
 * The event-file thread (event-file-worker.ts): a group written there is what the event loop
 * writes (each file its record, in order, the first failure stopping the rest), an atomic JSON
 * replacement too; synced writes stay on the event loop; a thread that ends before it answers
 * is answered from the disk, so the store and the event writer go on from what was written; a
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
import { eventFileThread } from './event-file-worker.ts'
import type { FileEventStore } from './file-store.ts'
import { writeEventFiles, writeJsonAtomic } from './file-log.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { openedStores } from './fixtures/stores.ts'
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

/**
 * Runs `work` with the thread stopped once it has created the file at `probe` (mid-request), and
 * checks the stop happened during the request.
 */
async function stoppedAt<T>(probe: string, work: () => Promise<T>): Promise<T> {
  eventFileThread.startAfter = 8
  await eventFileThread.started()
  const write = eventFileThread.write.bind(eventFileThread)
  let stopping: Promise<void> | undefined
  const spy = vi.spyOn(eventFileThread, 'write').mockImplementationOnce((files) => {
    const answer = write(files)
    stopping = (async () => {
      for (let i = 0; i < 100_000 && !existsSync(probe); i++) await new Promise((r) => setImmediate(r))
      await eventFileThread.stop()
    })()
    return answer
  })
  const answered = eventFileThread.answered
  try {
    return await work()
  } finally {
    expect(spy).toHaveBeenCalled()
    spy.mockRestore()
    await stopping
    // The thread never answered: what the caller got was read from the disk.
    expect(eventFileThread.answered).toBe(answered)
  }
}

async function newSession(root: string): Promise<{ store: FileEventStore; id: string }> {
  const store = stores.open({ root })
  const meta = sampleMeta('otter', new Date('2026-04-25T12:03:00Z'))
  await store.create(meta, sampleSummary(meta))
  return { store, id: meta.session_id }
}

describe('a thread that ends before it answers', () => {
  it('the store commits what is whole on disk, removes a torn file, and goes on after it', async () => {
    const root = join(tmp, 'eventlog-1')
    const { store, id } = await newSession(root)
    const heard: number[] = []
    store.subscribe(id, (e) => heard.push(e.seq))
    // Long enough that the thread is still writing when it is stopped.
    const group = Array.from({ length: 3000 }, (_, i) => sampleEvent(id, i + 1))
    const err = await stoppedAt(join(root, id, eventFileName(20, group[19]!.type)), () =>
      store.appendMany(group).then(
        () => undefined,
        (e: unknown) => e,
      ),
    )
    expect(err).toBeInstanceOf(AppendGroupError)
    const committed = (err as AppendGroupError).committed
    expect(committed).toBeGreaterThanOrEqual(19)
    expect(committed).toBeLessThan(group.length)
    // Exactly the committed events are on disk (a torn next file was removed), heard in order.
    expect(readdirSync(join(root, id)).filter((f) => f.startsWith('event-')).length).toBe(committed)
    expect(heard).toEqual(group.slice(0, committed).map((e) => e.seq))
    await store.append(sampleEvent(id, committed + 1))
    const log = await stores.open({ root }).read(id)
    expect(log).toEqual([...group.slice(0, committed), sampleEvent(id, committed + 1)])
  })

  it('the event writer reports what was written as written and its next events follow them', async () => {
    const root = join(tmp, 'eventlog-2')
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
    // The writer's first group is the first notice alone; the rest go as one group.
    await stoppedAt(join(root, id, eventFileName(21, 'notice')), async () => {
      for (let i = 0; i < 400; i++) writer.post('notice', { level: 'info', text: `n${i} ${'x'.repeat(2000)}` })
      await writer.settled()
    })
    const onDisk = async (): Promise<number[]> => (await stores.open({ root }).read(id)).map((e) => e.seq)
    // Everything on disk was reported written (one notice the stop cut short was lost, and said so).
    expect(heard).toEqual(await onDisk())
    expect(heard.length).toBeGreaterThanOrEqual(20)
    const later = await writer.emit('notice', { level: 'info', text: 'later' })
    expect(later.seq).toBe(heard.length)
    expect(await onDisk()).toEqual(heard)
  })

  it('an atomic replacement it did not finish leaves the old file and no temporary file', async () => {
    const dir = freshDir()
    const path = join(dir, 'state.json')
    writeFileSync(path, '{"old":true}\n')
    // The group before it holds the thread until the stop: the replacement is never begun.
    const group = Array.from({ length: 3000 }, (_, i) => sampleEvent('otter-x', i + 1))
    const results = await stoppedAt(join(dir, eventFileName(20, group[19]!.type)), () =>
      Promise.all([
        writeEventFiles(dir, group),
        writeJsonAtomic(path, { fresh: true }).then(
          () => 'replaced',
          (e: unknown) => e,
        ),
      ]),
    )
    expect(results[1]).toMatchObject({ code: 'EIO' })
    expect(readFileSync(path, 'utf8')).toBe('{"old":true}\n')
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
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
    } finally {
      spy.mockRestore()
      warned.mockRestore()
    }
  })
})
