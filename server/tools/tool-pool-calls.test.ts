/**
 * What a tool call asks of libuv's pool. The real paths of the working directory and of the rule
 * lists are reused for REAL_PATH_REUSE_MS (a burst of tool calls resolves each once); the path a
 * tool names is resolved on every call; a failure is not reused; a rule path re-pointed is
 * followed once the window has passed. Glob and list_files list their directory once, with no
 * `stat` before it.
 */
import { mkdirSync, rmdirSync, symlinkSync, unlinkSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import { globTool } from './glob.ts'
import { listFilesTool } from './list-files.ts'
import { forgetRealPaths, REAL_PATH_REUSE_MS, resolveInWorkspace } from './paths.ts'

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  return { ...real, realpath: vi.fn(real.realpath), readdir: vi.fn(real.readdir), stat: vi.fn(real.stat) }
})

const realpathCalls = (p: string): number => vi.mocked(fsp.realpath).mock.calls.filter(([a]) => a === p).length
const readdirCalls = (p: string): number => vi.mocked(fsp.readdir).mock.calls.filter(([a]) => a === p).length
const statCalls = (p: string): number => vi.mocked(fsp.stat).mock.calls.filter(([a]) => a === p).length

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({ 'a.txt': 'a', 'one/x.txt': 'x', 'two/x.txt': 'x' })
  forgetRealPaths()
  vi.mocked(fsp.realpath).mockClear()
  vi.mocked(fsp.readdir).mockClear()
  vi.mocked(fsp.stat).mockClear()
})
afterEach(() => {
  vi.useRealTimers()
  ws.cleanup()
})

describe('real paths reused for a moment', () => {
  it('a burst of calls resolves the working directory and each protected path once, the named path every time', async () => {
    const home = join(ws.outside, 'home')
    mkdirSync(home)
    const notYet = join(ws.outside, 'snapshots')
    for (let i = 0; i < 20; i++) {
      const r = await resolveInWorkspace(ws.cwd, 'a.txt', { protectedPaths: [home, notYet] })
      expect(r).toMatchObject({ ok: true, abs: join(ws.cwd, 'a.txt') })
    }
    expect(realpathCalls(ws.cwd)).toBe(1)
    expect(realpathCalls(home)).toBe(1)
    // A path that does not exist yet: the failed realpath is not retried within the window.
    expect(realpathCalls(notYet)).toBe(1)
    expect(realpathCalls(join(ws.cwd, 'a.txt'))).toBe(20)
  })

  it('the path a tool names is resolved on every call: a link re-pointed outside is refused at once', async () => {
    symlinkSync(join(ws.cwd, 'one'), join(ws.cwd, 'link'))
    expect(await resolveInWorkspace(ws.cwd, 'link/x.txt')).toMatchObject({ ok: true })
    unlinkSync(join(ws.cwd, 'link'))
    symlinkSync(ws.outside, join(ws.cwd, 'link'))
    expect(await resolveInWorkspace(ws.cwd, 'link/x.txt')).toMatchObject({ ok: false, violation: true })
  })

  it('a working directory that could not be resolved is tried again on the next call', async () => {
    const cwd = join(ws.cwd, 'later')
    expect(await resolveInWorkspace(cwd, '.')).toMatchObject({ ok: false, violation: false })
    mkdirSync(cwd)
    expect(await resolveInWorkspace(cwd, '.')).toMatchObject({ ok: true, abs: cwd })
    rmdirSync(cwd)
  })

  it('a protected link re-pointed: its new target is refused once the window has passed', async () => {
    vi.useFakeTimers({ toFake: ['hrtime'] })
    const link = join(ws.outside, 'protected-link')
    symlinkSync(join(ws.cwd, 'one'), link)
    const rules = { protectedPaths: [link] }
    expect(await resolveInWorkspace(ws.cwd, 'one/x.txt', rules)).toMatchObject({ ok: false, violation: true })
    expect(await resolveInWorkspace(ws.cwd, 'two/x.txt', rules)).toMatchObject({ ok: true })
    unlinkSync(link)
    symlinkSync(join(ws.cwd, 'two'), link)
    vi.advanceTimersByTime(REAL_PATH_REUSE_MS + 1)
    expect(await resolveInWorkspace(ws.cwd, 'two/x.txt', rules)).toMatchObject({ ok: false, violation: true })
  })
})

describe('a directory walked from one listing', () => {
  it('Glob and list_files list their directory once, with no stat before it', async () => {
    const ctx = recordingContext(ws.cwd)
    const g = await globTool.run({ path: 'one', pattern: '*.txt', max_results: 1000 }, ctx)
    expect(g).toMatchObject({ ok: true, output: 'one/x.txt' })
    const l = await listFilesTool.run({ path: 'two', recursive: false, max_entries: 1000 }, ctx)
    expect(l).toMatchObject({ ok: true, output: 'two/x.txt' })
    for (const dir of ['one', 'two']) {
      expect(readdirCalls(join(ws.cwd, dir))).toBe(1)
      expect(statCalls(join(ws.cwd, dir))).toBe(0)
    }
  })
})
