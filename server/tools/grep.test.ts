/**
 * Grep: `path:line:text` results relative to the cwd; root and nested .gitignore (with
 * negation); `.git` and `node_modules` always skipped; binary files skipped; glob filter;
 * case-insensitivity; the max_results cap; invalid regexes; confinement of the search path and
 * of symlinked files.
 */
import { symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GrepInput } from '../../generated/tools/tools.gen.ts'
import { grepTool } from './grep.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './test-support.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({
    '.gitignore': '*.log\n!keep.log\nbuild/\n',
    'a.txt': 'no\nneedle one\n',
    'keep.log': 'needle kept\n',
    'drop.log': 'needle dropped\n',
    'build/out.txt': 'needle built\n',
    'src/b.ts': 'const needle = 1\nNEEDLE upper\n',
    'src/.gitignore': 'secret.ts\n',
    'src/secret.ts': 'needle secret\n',
    'src/deep/c.ts': 'needle deep\n',
    'src/deep/d.js': 'needle js\n',
    '.git/config': 'needle git\n',
    'node_modules/pkg/index.js': 'needle module\n',
    'bin.dat': Buffer.from('needle\0binary'),
  })
})
afterEach(() => ws.cleanup())

const grep = async (args: Partial<GrepInput> & { pattern: string }, sandbox: 'workspace-write' | 'read-only' = 'workspace-write') => {
  const ctx = recordingContext(ws.cwd, sandbox)
  const r = await grepTool.run({ case_insensitive: false, max_results: 200, ...args }, ctx)
  return { ctx, r, lines: r.ok ? r.output.split('\n') : [] }
}

describe('Grep', () => {
  it('returns path:line:text, honouring root and nested .gitignore and the fixed skips', async () => {
    const { r, lines } = await grep({ pattern: 'needle' })
    expect(r.ok).toBe(true)
    expect(lines).toEqual(['a.txt:2:needle one', 'keep.log:1:needle kept', 'src/b.ts:1:const needle = 1', 'src/deep/c.ts:1:needle deep', 'src/deep/d.js:1:needle js'])
    expect(r.data).toMatchObject({ matches: 5, truncated: false })
  })

  it('is case-insensitive on request', async () => {
    const { lines } = await grep({ pattern: '^needle upper', case_insensitive: true })
    expect(lines).toEqual(['src/b.ts:2:NEEDLE upper'])
  })

  it('filters by glob: basename globs at any depth, path globs relative to the search path', async () => {
    expect((await grep({ pattern: 'needle', glob: '*.ts' })).lines).toEqual(['src/b.ts:1:const needle = 1', 'src/deep/c.ts:1:needle deep'])
    expect((await grep({ pattern: 'needle', glob: 'src/deep/**' })).lines).toEqual(['src/deep/c.ts:1:needle deep', 'src/deep/d.js:1:needle js'])
    expect((await grep({ pattern: 'needle', glob: '**/*.{js,txt}' })).lines).toEqual(['a.txt:2:needle one', 'src/deep/d.js:1:needle js'])
    expect((await grep({ pattern: 'needle', path: 'src', glob: 'deep/*.ts' })).lines).toEqual(['src/deep/c.ts:1:needle deep'])
  })

  it('searches a subdirectory or a single file, paths still relative to the cwd', async () => {
    expect((await grep({ pattern: 'needle', path: 'src/deep' })).lines).toEqual(['src/deep/c.ts:1:needle deep', 'src/deep/d.js:1:needle js'])
    expect((await grep({ pattern: 'needle', path: 'src/b.ts' })).lines).toEqual(['src/b.ts:1:const needle = 1'])
    // A directory named explicitly is searched even when .gitignore excludes it.
    expect((await grep({ pattern: 'needle', path: 'build' })).lines).toEqual(['build/out.txt:1:needle built'])
  })

  it('caps the results at max_results with a note', async () => {
    ws.write({ 'many.txt': Array.from({ length: 50 }, () => 'needle').join('\n') })
    const { r, lines } = await grep({ pattern: 'needle', path: 'many.txt', max_results: 10 })
    expect(lines.filter((l) => l.startsWith('many.txt:'))).toHaveLength(10)
    expect(lines.at(-1)).toBe('(results truncated at 10 matches; narrow the pattern, path or glob)')
    expect(r.data).toMatchObject({ matches: 10, truncated: true })
  })

  it('says so when nothing matches', async () => {
    expect((await grep({ pattern: 'zzz-not-there' })).r).toMatchObject({ ok: true, output: 'No matches found' })
  })

  it('reports an invalid regex clearly', async () => {
    const { r } = await grep({ pattern: '(unclosed' })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(/^invalid regular expression \/\(unclosed\/: /)
  })

  it('refuses a search path outside the workspace and skips symlinked files that lead outside', async () => {
    writeFileSync(join(ws.outside, 'secret.txt'), 'needle outside\n')
    const out = await grep({ pattern: 'needle', path: '../outside' })
    expect(out.r.ok).toBe(false)
    expect(out.ctx.violations).toHaveLength(1)
    symlinkSync(join(ws.outside, 'secret.txt'), join(ws.cwd, 'link.txt'))
    symlinkSync(ws.outside, join(ws.cwd, 'linkdir'))
    const { lines } = await grep({ pattern: 'outside' })
    expect(lines).toEqual(['No matches found'])
  })

  it('works in read-only', async () => {
    expect((await grep({ pattern: 'needle deep' }, 'read-only')).lines).toEqual(['src/deep/c.ts:1:needle deep'])
  })
})
