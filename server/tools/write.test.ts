/**
 * Write: creates parents, reports bytes, overwrites; refused in read-only, outside the
 * workspace and through a symlink that points outside (nothing is created there).
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import type { SandboxMode } from './types.ts'
import { writeTool } from './write.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
})
afterEach(() => ws.cleanup())

const write = async (path: string, content: string, sandbox: SandboxMode = 'workspace-write') => {
  const ctx = recordingContext(ws.cwd, sandbox)
  return { ctx, r: await writeTool.run({ path, content }, ctx) }
}

describe('Write', () => {
  it('creates parent directories and reports the bytes written', async () => {
    const { r } = await write('a/b/c.txt', 'héllo')
    expect(r).toEqual({
      ok: true,
      output: 'Created a/b/c.txt (6 bytes)',
      data: { path: 'a/b/c.txt', bytes: 6, created: true },
    })
    expect(readFileSync(join(ws.cwd, 'a/b/c.txt'), 'utf8')).toBe('héllo')
  })

  it('overwrites an existing file', async () => {
    ws.write({ 'f.txt': 'old content' })
    const { r } = await write('f.txt', 'new')
    expect(r).toMatchObject({ ok: true, data: { created: false, bytes: 3 } })
    expect(readFileSync(join(ws.cwd, 'f.txt'), 'utf8')).toBe('new')
  })

  it('refuses a directory as target', async () => {
    mkdirSync(join(ws.cwd, 'd'))
    expect((await write('d', 'x')).r).toMatchObject({ ok: false, error: expect.stringContaining('is a directory') })
  })

  it('refuses every write in read-only, even inside the workspace', async () => {
    const { r, ctx } = await write('f.txt', 'x', 'read-only')
    expect(r.ok).toBe(false)
    expect(ctx.violations).toEqual([{ tool: 'Write', path: join(ws.cwd, 'f.txt'), mode: 'read-only' }])
    expect(existsSync(join(ws.cwd, 'f.txt'))).toBe(false)
  })

  it('refuses `..`, absolute and symlinked escapes without creating anything outside', async () => {
    symlinkSync(join(ws.outside, 'via-link.txt'), join(ws.cwd, 'dangling'))
    symlinkSync(ws.outside, join(ws.cwd, 'outdir'))
    for (const p of ['../outside/up.txt', join(ws.outside, 'abs.txt'), 'dangling', 'outdir/nested/x.txt']) {
      const { r, ctx } = await write(p, 'pwned')
      expect(r.ok, p).toBe(false)
      expect(ctx.violations, p).toHaveLength(1)
    }
    for (const f of ['up.txt', 'abs.txt', 'via-link.txt', 'nested']) expect(existsSync(join(ws.outside, f))).toBe(false)
  })

  it('tells the file-change tracker before and after, with the real path', async () => {
    const created = await write('new/f.txt', 'x')
    expect(created.ctx.fileEvents).toEqual([
      `will ${join(ws.cwd, 'new/f.txt')}`,
      `changed ${join(ws.cwd, 'new/f.txt')}`,
    ])
    symlinkSync(join(ws.cwd, 'new'), join(ws.cwd, 'alias'))
    const overwritten = await write('alias/f.txt', 'y')
    expect(overwritten.ctx.fileEvents).toEqual([
      `will ${join(ws.cwd, 'new/f.txt')}`,
      `changed ${join(ws.cwd, 'new/f.txt')}`,
    ])
    expect((await write('../outside/no.txt', 'z')).ctx.fileEvents).toEqual([])
  })

  it('writes outside in danger-full-access', async () => {
    const { r } = await write('../outside/ok.txt', 'fine', 'danger-full-access')
    expect(r.ok).toBe(true)
    expect(readFileSync(join(ws.outside, 'ok.txt'), 'utf8')).toBe('fine')
  })
})
