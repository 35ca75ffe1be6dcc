/**
 * The event-file thread (event-file-worker.ts): a group written there is what the event loop
 * writes (each file its record, in order, the first failure stopping the rest), an atomic JSON
 * replacement too; a thread stopped before it answers fails the group without losing the log;
 * and a process whose thread has nothing to write ends on its own.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { eventFileThread } from './event-file-worker.ts'
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
    await expect(
      where(() => writeJsonAtomic(blocked, { x: 1 }).catch((e: unknown) => Promise.reject(e))),
    ).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
    })
    expect(names(dir)).toEqual(['blocked.json', 'summary.json'])
  })
})

describe('a thread that stops before it answers', () => {
  it('fails the group with nothing counted as written, and the next write reads the log again', async () => {
    eventFileThread.startAfter = 8
    await eventFileThread.started()
    const root = join(tmp, 'eventlog')
    const store = stores.open({ root })
    const meta = sampleMeta('otter', new Date('2026-04-25T12:03:00Z'))
    await store.create(meta, sampleSummary(meta))
    const id = meta.session_id
    // Long enough that the thread is still writing when it is stopped.
    const group = Array.from({ length: 3000 }, (_, i) => sampleEvent(id, i + 1))
    // The thread is stopped once it has created the group's first file, mid-group.
    const write = eventFileThread.write.bind(eventFileThread)
    const first = join(root, id, eventFileName(1, group[0]!.type))
    let stopping: Promise<void> | undefined
    const spy = vi.spyOn(eventFileThread, 'write').mockImplementation((files, fsync) => {
      const answer = write(files, fsync)
      stopping = (async () => {
        for (let i = 0; i < 100_000 && !existsSync(first); i++) await new Promise((r) => setImmediate(r))
        await eventFileThread.stop()
      })()
      return answer
    })
    const err = await store.appendMany(group).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(spy).toHaveBeenCalledTimes(1)
    spy.mockRestore()
    await stopping
    expect(err).toBeInstanceOf(AppendGroupError)
    expect((err as AppendGroupError).committed).toBe(0)
    expect(String((err as AppendGroupError).cause)).toMatch(/thread stopped/)
    const onDisk = readdirSync(join(root, id)).filter((f) => f.startsWith('event-')).length
    expect(onDisk).toBeGreaterThan(0)
    expect(onDisk).toBeLessThan(group.length)
    // The store no longer trusts its counter: it reads the log (a torn last file is set aside)
    // and the next event goes after what is there.
    const kept = (await store.read(id)).length
    expect(kept).toBeGreaterThanOrEqual(onDisk - 1)
    await store.append(sampleEvent(id, kept + 1))
    const log = await stores.open({ root }).read(id)
    expect(log).toEqual([...group.slice(0, kept), sampleEvent(id, kept + 1)])
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
