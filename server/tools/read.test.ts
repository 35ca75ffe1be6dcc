/**
 * Read: numbered lines, offset/limit, and the clear errors for binary, missing, oversized,
 * directory and out-of-workspace files.
 */
import { symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { numberLine, readTool, splitLines } from './read.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import { MAX_TEXT_FILE_BYTES } from './text-file.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
})
afterEach(() => ws.cleanup())

const run = (
  args: { path: string; offset?: number; limit?: number },
  sandbox: 'read-only' | 'workspace-write' = 'workspace-write',
) => {
  const ctx = recordingContext(ws.cwd, sandbox)
  return { ctx, result: readTool.run(args, ctx) }
}

describe('Read', () => {
  it('returns numbered lines', async () => {
    ws.write({ 'f.txt': 'alpha\nbeta\r\ngamma\n' })
    const r = await run({ path: 'f.txt' }).result
    expect(r).toEqual({
      ok: true,
      output: '     1\talpha\n     2\tbeta\n     3\tgamma',
      data: { path: 'f.txt', totalLines: 3, startLine: 1, endLine: 3, truncated: false },
    })
  })

  it('honours offset and limit and says what part it showed', async () => {
    ws.write({ 'f.txt': Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') })
    const r = await run({ path: 'f.txt', offset: 4, limit: 2 }).result
    expect(r.ok).toBe(true)
    if (r.ok) {
      expect(r.output.split('\n').slice(0, 2)).toEqual(['     4\tline 4', '     5\tline 5'])
      expect(r.output).toContain('lines 4-5 of 10')
    }
    const past = await run({ path: 'f.txt', offset: 11 }).result
    expect(past).toMatchObject({ ok: false, error: 'offset 11 is past the end of f.txt (10 lines)' })
  })

  it('reads a read-only workspace, absolute and file:// paths', async () => {
    ws.write({ 'd/f.txt': 'x' })
    expect((await run({ path: join(ws.cwd, 'd/f.txt') }, 'read-only').result).ok).toBe(true)
    expect((await run({ path: `file://${join(ws.cwd, 'd/f.txt')}` }).result).ok).toBe(true)
  })

  it('says so for an empty file', async () => {
    ws.write({ 'e.txt': '' })
    expect(await run({ path: 'e.txt' }).result).toMatchObject({ ok: true, output: '(empty file)' })
  })

  it('refuses binary files', async () => {
    ws.write({ 'bin.dat': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]) })
    const r = await run({ path: 'bin.dat' }).result
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(/bin\.dat appears to be a binary file/)
  })

  it('reports a missing file and a directory', async () => {
    expect(await run({ path: 'nope.txt' }).result).toEqual({ ok: false, error: 'file not found: nope.txt' })
    ws.write({ 'd/x': '' })
    expect(await run({ path: 'd' }).result).toMatchObject({ ok: false, error: 'd is a directory, not a file' })
  })

  it('refuses files over 10 MiB', async () => {
    const big = join(ws.cwd, 'big.txt')
    writeFileSync(big, 'x')
    truncateSync(big, MAX_TEXT_FILE_BYTES + 1)
    const r = await run({ path: 'big.txt' }).result
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(/too large/)
  })

  it('refuses paths outside the workspace and symlink escapes, reporting a violation', async () => {
    writeFileSync(join(ws.outside, 'secret.txt'), 'secret')
    symlinkSync(join(ws.outside, 'secret.txt'), join(ws.cwd, 'link'))
    for (const path of ['../outside/secret.txt', join(ws.outside, 'secret.txt'), 'link']) {
      const { ctx, result } = run({ path })
      const r = await result
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.error).toContain('sandbox violation')
      expect(ctx.violations).toHaveLength(1)
      expect(ctx.violations[0]).toMatchObject({ tool: 'Read', mode: 'workspace-write' })
    }
  })

  it('permissionKey is the resolved path', () => {
    expect(readTool.permissionKey({ path: 'a/../b.txt' }, { cwd: '/w' })).toBe('/w/b.txt')
  })
})

describe('line helpers', () => {
  it('splitLines drops the empty line after a final newline', () => {
    expect(splitLines('')).toEqual([])
    expect(splitLines('a\n')).toEqual(['a'])
    expect(splitLines('a\n\nb')).toEqual(['a', '', 'b'])
  })
  it('numberLine pads to 6 columns and cuts very long lines', () => {
    expect(numberLine(1, 'x')).toBe('     1\tx')
    expect(numberLine(1234567, 'x')).toBe('1234567\tx')
    expect(numberLine(1, 'y'.repeat(3000))).toMatch(/… \[line truncated, 3000 chars\]$/)
  })
})
