/**
 * Workspace confinement: relative, absolute and file:// paths; `..`, absolute and symlink
 * escapes (existing, dangling and through a linked directory); NUL bytes; the read-only and
 * danger-full-access modes; and confinePath reporting the violation to the context.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { confinePath, displayPath, isInside, lexicalPath, resolveInWorkspace, toFsPath } from './paths.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({ 'a.txt': 'a', 'dir/b.txt': 'b', '..dots': 'x' })
  writeFileSync(join(ws.outside, 'secret.txt'), 'secret')
})
afterEach(() => ws.cleanup())

describe('resolveInWorkspace', () => {
  it('accepts relative, absolute and file:// paths inside the workspace', async () => {
    expect(await resolveInWorkspace(ws.cwd, 'a.txt')).toEqual({
      ok: true,
      abs: join(ws.cwd, 'a.txt'),
      root: ws.cwd,
      protectedPaths: [],
    })
    expect(await resolveInWorkspace(ws.cwd, join(ws.cwd, 'dir/b.txt'))).toMatchObject({
      ok: true,
      abs: join(ws.cwd, 'dir/b.txt'),
    })
    expect(await resolveInWorkspace(ws.cwd, pathToFileURL(join(ws.cwd, 'dir/b.txt')).href)).toMatchObject({
      ok: true,
      abs: join(ws.cwd, 'dir/b.txt'),
    })
    expect(await resolveInWorkspace(ws.cwd, 'dir/../a.txt')).toMatchObject({ ok: true, abs: join(ws.cwd, 'a.txt') })
    expect(await resolveInWorkspace(ws.cwd, '.')).toMatchObject({ ok: true, abs: ws.cwd })
    expect(await resolveInWorkspace(ws.cwd, '..dots')).toMatchObject({ ok: true })
  })

  it('resolves files that do not exist yet through their nearest existing parent', async () => {
    expect(await resolveInWorkspace(ws.cwd, 'new/deeper/file.txt', { forWrite: true })).toMatchObject({
      ok: true,
      abs: join(ws.cwd, 'new/deeper/file.txt'),
    })
  })

  it('rejects `..` escapes and absolute paths outside as violations', async () => {
    const up = await resolveInWorkspace(ws.cwd, '../outside/secret.txt')
    expect(up).toMatchObject({ ok: false, violation: true })
    if (!up.ok) expect(up.reason).toContain('outside the workspace')
    expect(await resolveInWorkspace(ws.cwd, join(ws.outside, 'secret.txt'))).toMatchObject({
      ok: false,
      violation: true,
    })
    expect(await resolveInWorkspace(ws.cwd, '/etc/passwd')).toMatchObject({ ok: false, violation: true })
    expect(await resolveInWorkspace(ws.cwd, '..')).toMatchObject({ ok: false, violation: true })
    expect(await resolveInWorkspace(ws.cwd, pathToFileURL(join(ws.outside, 'secret.txt')).href)).toMatchObject({
      ok: false,
      violation: true,
    })
  })

  it('rejects a symlink inside the workspace that points outside', async () => {
    symlinkSync(join(ws.outside, 'secret.txt'), join(ws.cwd, 'link.txt'))
    const r = await resolveInWorkspace(ws.cwd, 'link.txt')
    expect(r).toMatchObject({ ok: false, violation: true, abs: join(ws.outside, 'secret.txt') })
  })

  it('rejects a dangling symlink to a not-yet-existing file outside (no create-through-link)', async () => {
    symlinkSync(join(ws.outside, 'created-by-link.txt'), join(ws.cwd, 'dangling'))
    expect(await resolveInWorkspace(ws.cwd, 'dangling', { forWrite: true })).toMatchObject({
      ok: false,
      violation: true,
      abs: join(ws.outside, 'created-by-link.txt'),
    })
  })

  it('rejects new files under a symlinked directory that points outside', async () => {
    symlinkSync(ws.outside, join(ws.cwd, 'outlink'))
    expect(await resolveInWorkspace(ws.cwd, 'outlink/new/file.txt', { forWrite: true })).toMatchObject({
      ok: false,
      violation: true,
    })
  })

  it('allows symlinks that stay inside, and a workspace reached through a symlink', async () => {
    symlinkSync(join(ws.cwd, 'dir'), join(ws.cwd, 'inlink'))
    expect(await resolveInWorkspace(ws.cwd, 'inlink/b.txt')).toMatchObject({ ok: true, abs: join(ws.cwd, 'dir/b.txt') })
    const alias = join(ws.outside, 'alias')
    symlinkSync(ws.cwd, alias)
    expect(await resolveInWorkspace(alias, 'a.txt')).toMatchObject({
      ok: true,
      abs: join(ws.cwd, 'a.txt'),
      root: ws.cwd,
    })
  })

  it('rejects NUL bytes and bad file URIs as plain errors, not violations', async () => {
    expect(await resolveInWorkspace(ws.cwd, 'a\0b')).toMatchObject({
      ok: false,
      violation: false,
      reason: 'path contains a NUL byte',
    })
    expect(await resolveInWorkspace(ws.cwd, 'file://remote-host/x')).toMatchObject({ ok: false, violation: false })
  })

  it('refuses every write in read-only, but allows reads', async () => {
    expect(await resolveInWorkspace(ws.cwd, 'a.txt', { mode: 'read-only' })).toMatchObject({ ok: true })
    const w = await resolveInWorkspace(ws.cwd, 'a.txt', { mode: 'read-only', forWrite: true })
    expect(w).toMatchObject({ ok: false, violation: true })
    if (!w.ok) expect(w.reason).toContain('read-only')
  })

  it('allows paths outside in danger-full-access', async () => {
    expect(
      await resolveInWorkspace(ws.cwd, '../outside/secret.txt', { mode: 'danger-full-access', forWrite: true }),
    ).toMatchObject({ ok: true, abs: join(ws.outside, 'secret.txt') })
  })

  it('fails cleanly on a missing working directory and on symlink loops', async () => {
    expect(await resolveInWorkspace(join(ws.cwd, 'nope'), 'a.txt')).toMatchObject({ ok: false, violation: false })
    symlinkSync(join(ws.cwd, 'loop2'), join(ws.cwd, 'loop1'))
    symlinkSync(join(ws.cwd, 'loop1'), join(ws.cwd, 'loop2'))
    expect(await resolveInWorkspace(ws.cwd, 'loop1')).toMatchObject({ ok: false, violation: false })
  })
})

describe('confinePath', () => {
  it('reports a violation to the context and returns a tool error', async () => {
    symlinkSync(join(ws.outside, 'secret.txt'), join(ws.cwd, 'link.txt'))
    const ctx = recordingContext(ws.cwd, 'workspace-write')
    const r = await confinePath('Read', ctx, 'link.txt')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.outcome).toMatchObject({ ok: false, error: expect.stringContaining('sandbox violation') })
    expect(ctx.violations).toEqual([{ tool: 'Read', path: join(ws.outside, 'secret.txt'), mode: 'workspace-write' }])
  })

  it('does not report plain bad input as a violation', async () => {
    const ctx = recordingContext(ws.cwd)
    const r = await confinePath('Read', ctx, 'x\0y')
    expect(r.ok).toBe(false)
    expect(ctx.violations).toEqual([])
  })
})

describe('helpers', () => {
  it('isInside, displayPath, lexicalPath, toFsPath', () => {
    mkdirSync(join(ws.cwd, 'sub'), { recursive: true })
    expect(isInside('/a/b', '/a/b')).toBe(true)
    expect(isInside('/a/b', '/a/b/c')).toBe(true)
    expect(isInside('/a/b', '/a/bc')).toBe(false)
    expect(isInside('/a/b', '/a/b/..c')).toBe(true)
    expect(displayPath('/a/b', '/a/b/c/d')).toBe('c/d')
    expect(displayPath('/a/b', '/a/b')).toBe('.')
    expect(displayPath('/a/b', '/x')).toBe('/x')
    expect(lexicalPath('/a/b', 'c/../d')).toBe('/a/b/d')
    expect(lexicalPath('/a/b', 'file:///x/y')).toBe('/x/y')
    expect(toFsPath('file:///x%20y')).toEqual({ ok: true, path: '/x y' })
  })
})
