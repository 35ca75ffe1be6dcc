/**
 * What a tool call asks of libuv's pool. The real paths of the working directory and of the rule
 * lists are reused for REAL_PATH_REUSE_MS when they are their own real paths (a burst of tool
 * calls resolves each once); one reached through a symbolic link, and the path a tool names, are
 * resolved on every call; a failure is not reused; a clock that goes back starts the memo over.
 * Glob and list_files list their directory once, with nothing before it.
 */
import { mkdirSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import { globTool } from './glob.ts'
import { listFilesTool } from './list-files.ts'
import { forgetRealPaths, REAL_PATH_REUSE_MS, resolveInWorkspace } from './paths.ts'

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...real,
    realpath: vi.fn(real.realpath),
    readdir: vi.fn(real.readdir),
    stat: vi.fn(real.stat),
    lstat: vi.fn(real.lstat),
  }
})

const callsOn = (fn: (p: string, ...rest: never[]) => unknown, p: string): number =>
  vi.mocked(fn).mock.calls.filter(([a]) => a === p).length

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({ 'a.txt': 'a', 'one/x.txt': 'x', 'two/x.txt': 'x' })
  forgetRealPaths()
  for (const fn of [fsp.realpath, fsp.readdir, fsp.stat, fsp.lstat]) vi.mocked(fn).mockClear()
  // A clock that stands still: a burst never outlasts the window, however loaded the machine.
  vi.useFakeTimers({ toFake: ['hrtime'] })
})
afterEach(() => {
  vi.useRealTimers()
  ws.cleanup()
})

describe('real paths reused for a moment', () => {
  it('a burst of calls resolves the working directory and each protected path once, the named path every time', async () => {
    const home = join(ws.outside, 'home')
    mkdirSync(home)
    // Not made yet: resolved (loosely) to itself, so reused as well.
    const notYet = join(ws.outside, 'snapshots')
    for (let i = 0; i < 20; i++) {
      const r = await resolveInWorkspace(ws.cwd, 'a.txt', { protectedPaths: [home, notYet] })
      expect(r).toMatchObject({ ok: true, abs: join(ws.cwd, 'a.txt') })
    }
    expect(callsOn(fsp.realpath, ws.cwd)).toBe(1)
    expect(callsOn(fsp.realpath, home)).toBe(1)
    expect(callsOn(fsp.realpath, notYet)).toBe(1)
    expect(callsOn(fsp.realpath, join(ws.cwd, 'a.txt'))).toBe(20)
  })

  it('a clock that went back starts the memo over', async () => {
    vi.advanceTimersByTime(REAL_PATH_REUSE_MS / 2)
    await resolveInWorkspace(ws.cwd, 'a.txt')
    // A new fake clock starts at 0 again: within the window of the answer above, but earlier.
    vi.useRealTimers()
    vi.useFakeTimers({ toFake: ['hrtime'] })
    await resolveInWorkspace(ws.cwd, 'a.txt')
    expect(callsOn(fsp.realpath, ws.cwd)).toBe(2)
  })

  it('the path a tool names is resolved on every call: a link re-pointed outside is refused at once', async () => {
    symlinkSync(join(ws.cwd, 'one'), join(ws.cwd, 'link'))
    expect(await resolveInWorkspace(ws.cwd, 'link/x.txt')).toMatchObject({ ok: true })
    unlinkSync(join(ws.cwd, 'link'))
    symlinkSync(ws.outside, join(ws.cwd, 'link'))
    expect(await resolveInWorkspace(ws.cwd, 'link/x.txt')).toMatchObject({ ok: false, violation: true })
  })

  it('a working directory reached through a link is resolved on every call: re-pointed, its old target is refused at once', async () => {
    const current = join(ws.outside, 'current')
    symlinkSync(join(ws.cwd, 'one'), current)
    expect(await resolveInWorkspace(current, 'x.txt')).toMatchObject({ ok: true, abs: join(ws.cwd, 'one', 'x.txt') })
    unlinkSync(current)
    symlinkSync(join(ws.cwd, 'two'), current)
    expect(await resolveInWorkspace(current, join(ws.cwd, 'one', 'x.txt'))).toMatchObject({
      ok: false,
      violation: true,
    })
    expect(await resolveInWorkspace(current, 'x.txt')).toMatchObject({ ok: true, abs: join(ws.cwd, 'two', 'x.txt') })
    expect(callsOn(fsp.realpath, current)).toBe(3)
  })

  it('a working directory that could not be resolved is tried again on the next call', async () => {
    const cwd = join(ws.cwd, 'later')
    expect(await resolveInWorkspace(cwd, '.')).toMatchObject({ ok: false, violation: false })
    mkdirSync(cwd)
    expect(await resolveInWorkspace(cwd, '.')).toMatchObject({ ok: true, abs: cwd })
    rmdirSync(cwd)
  })

  it('a protected link is resolved on every call: re-pointed, its new target is refused at once', async () => {
    const link = join(ws.outside, 'protected-link')
    symlinkSync(join(ws.cwd, 'one'), link)
    const rules = { protectedPaths: [link] }
    expect(await resolveInWorkspace(ws.cwd, 'one/x.txt', rules)).toMatchObject({ ok: false, violation: true })
    expect(await resolveInWorkspace(ws.cwd, 'two/x.txt', rules)).toMatchObject({ ok: true })
    unlinkSync(link)
    symlinkSync(join(ws.cwd, 'two'), link)
    expect(await resolveInWorkspace(ws.cwd, 'two/x.txt', rules)).toMatchObject({ ok: false, violation: true })
  })

  it('a protected directory replaced by a link is followed once the window has passed', async () => {
    const guarded = join(ws.outside, 'guarded')
    mkdirSync(guarded)
    writeFileSync(join(guarded, 'key'), 'k')
    const rules = { protectedPaths: [guarded] }
    expect(
      await resolveInWorkspace(ws.cwd, join(guarded, 'key'), { ...rules, mode: 'danger-full-access' }),
    ).toMatchObject({ ok: false, violation: true })
    unlinkSync(join(guarded, 'key'))
    rmdirSync(guarded)
    symlinkSync(join(ws.cwd, 'two'), guarded)
    vi.advanceTimersByTime(REAL_PATH_REUSE_MS + 1)
    expect(await resolveInWorkspace(ws.cwd, 'two/x.txt', rules)).toMatchObject({ ok: false, violation: true })
  })
})

describe('a directory walked from one listing', () => {
  it('Glob and list_files list their directory once, with no stat or lstat before it', async () => {
    const ctx = recordingContext(ws.cwd)
    const g = await globTool.run({ path: 'one', pattern: '*.txt', max_results: 1000 }, ctx)
    expect(g).toMatchObject({ ok: true, output: 'one/x.txt' })
    const l = await listFilesTool.run({ path: 'two', recursive: false, max_entries: 1000 }, ctx)
    expect(l).toMatchObject({ ok: true, output: 'two/x.txt' })
    for (const dir of ['one', 'two']) {
      expect(callsOn(fsp.readdir, join(ws.cwd, dir))).toBe(1)
      expect(callsOn(fsp.stat, join(ws.cwd, dir)) + callsOn(fsp.lstat, join(ws.cwd, dir))).toBe(0)
    }
  })
})
