/**
 * list_files: one level or recursive, directories with a trailing `/`, the ignore rules,
 * the max_entries cap, symlinks not followed, and confinement.
 */
import { symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { list_filesInput } from '../../generated/tools/tools.gen.ts'
import { listFilesTool } from './list-files.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({
    '.gitignore': 'tmp/\n*.bak\n',
    'a.txt': '',
    'a.bak': '',
    'src/x.ts': '',
    'src/sub/y.ts': '',
    'src/sub/.gitignore': 'y.ts\n',
    'src/sub/z.ts': '',
    'tmp/junk': '',
    'node_modules/m/index.js': '',
    '.git/HEAD': '',
  })
})
afterEach(() => ws.cleanup())

const list = async (args: Partial<list_filesInput> = {}) => {
  const ctx = recordingContext(ws.cwd)
  const r = await listFilesTool.run({ recursive: false, max_entries: 1000, ...args }, ctx)
  return { ctx, r, lines: r.ok ? r.output.split('\n') : [] }
}

describe('list_files', () => {
  it('lists one level, directories marked with /', async () => {
    expect((await list()).lines).toEqual(['.gitignore', 'a.txt', 'src/'])
    expect((await list({ path: 'src' })).lines).toEqual(['src/sub/', 'src/x.ts'])
  })

  it('lists recursively with root and nested ignore rules', async () => {
    expect((await list({ recursive: true })).lines).toEqual([
      '.gitignore',
      'a.txt',
      'src/',
      'src/sub/',
      'src/sub/.gitignore',
      'src/sub/z.ts',
      'src/x.ts',
    ])
  })

  it('caps the entries', async () => {
    const { r, lines } = await list({ recursive: true, max_entries: 3 })
    expect(lines).toEqual(['.gitignore', 'a.txt', 'src/', '(listing truncated at 3 entries)'])
    expect(r.data).toEqual({ count: 3, truncated: true })
  })

  it('shows symlinks but does not follow them out of the workspace', async () => {
    writeFileSync(join(ws.outside, 'secret.txt'), '')
    symlinkSync(ws.outside, join(ws.cwd, 'out'))
    const { lines } = await list({ recursive: true })
    expect(lines).toContain('out/')
    expect(lines.some((l) => l.includes('secret'))).toBe(false)
    const through = await list({ path: 'out' })
    expect(through.r.ok).toBe(false)
    expect(through.ctx.violations).toHaveLength(1)
  })

  it('reports an empty directory, a file and a missing path', async () => {
    ws.write({ 'empty/.keep': '' })
    expect((await list({ path: 'empty' })).lines).toEqual(['empty/.keep'])
    expect((await list({ path: 'a.txt' })).r).toEqual({ ok: false, error: 'a.txt is not a directory' })
    expect((await list({ path: 'missing' })).r).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^cannot list missing: /),
    })
  })

  it('refuses paths outside the workspace', async () => {
    const { r, ctx } = await list({ path: '/' })
    expect(r.ok).toBe(false)
    expect(ctx.violations).toEqual([{ tool: 'list_files', path: '/', mode: 'workspace-write' }])
  })
})
