/**
 * Glob: patterns relative to the search directory, results relative to the cwd in name order,
 * the .gitignore / .git / node_modules rules, the max_results cap, and confinement.
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GlobInput } from '../../generated/tools/tools.gen.ts'
import { globTool } from './glob.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({
    '.gitignore': 'dist/\n*.gen.ts\n',
    'index.ts': '',
    'README.md': '',
    'src/a.ts': '',
    'src/a.gen.ts': '',
    'src/lib/b.ts': '',
    'src/lib/c.js': '',
    'src/lib/.gitignore': 'c.js\n',
    'dist/out.ts': '',
    'node_modules/x/y.ts': '',
    '.git/HEAD': '',
  })
})
afterEach(() => ws.cleanup())

const glob = async (args: Partial<GlobInput> & { pattern: string }) => {
  const ctx = recordingContext(ws.cwd)
  const r = await globTool.run({ max_results: 1000, ...args }, ctx)
  return { ctx, r, lines: r.ok ? r.output.split('\n') : [] }
}

describe('Glob', () => {
  it('matches across directories, skipping ignored files', async () => {
    expect((await glob({ pattern: '**/*.ts' })).lines).toEqual(['index.ts', 'src/a.ts', 'src/lib/b.ts'])
    expect((await glob({ pattern: '**/*.js' })).lines).toEqual(['No files found'])
    expect((await glob({ pattern: '**' })).lines).toEqual([
      '.gitignore',
      'README.md',
      'index.ts',
      'src/a.ts',
      'src/lib/.gitignore',
      'src/lib/b.ts',
    ])
  })

  it('anchors single-segment patterns at the search directory', async () => {
    expect((await glob({ pattern: '*.ts' })).lines).toEqual(['index.ts'])
    expect((await glob({ pattern: '*.{ts,md}' })).lines).toEqual(['README.md', 'index.ts'])
    expect((await glob({ pattern: 'src/*/*.ts' })).lines).toEqual(['src/lib/b.ts'])
  })

  it('searches from a given path; absolute patterns inside it work', async () => {
    expect((await glob({ pattern: '*.ts', path: 'src' })).lines).toEqual(['src/a.ts'])
    expect((await glob({ pattern: join(ws.cwd, 'src', '**', '*.ts') })).lines).toEqual(['src/a.ts', 'src/lib/b.ts'])
    expect((await glob({ pattern: '/etc/*' })).r).toMatchObject({
      ok: false,
      error: expect.stringContaining('inside the search directory'),
    })
  })

  it('rejects a pattern past the wildcard cap at once, and matches one at the cap in bounded time', async () => {
    ws.write({ ['a'.repeat(200)]: '' })
    const r = await glob({ pattern: '*a*a*a*a*a*a*a*a*a*a*a*a*c' })
    expect(r.r).toEqual({
      ok: false,
      error:
        'the glob "*a*a*a*a*a*a*a*a*a*a*a*a*c" has 13 "*" wildcards in the segment "*a*a*a*a*a*a*a*a*a*a*a*a*c"; at most 3 per path segment are allowed (more can make matching very slow): narrow the pattern',
    })
    expect((await glob({ pattern: '*a*a*c' })).lines).toEqual(['No files found'])
    expect((await glob({ pattern: '**/*a*a*c/**/*a*a*' })).lines).toEqual(['No files found'])
    expect((await glob({ pattern: '{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}' })).r).toMatchObject({
      ok: false,
      error: expect.stringContaining('more than 64 {…} alternatives'),
    })
  })

  it('treats regular-expression syntax in a glob literally', async () => {
    ws.write({ 'a(b|c).ts': '', 'ab.ts': '', 'a+b.ts': '', 'aab.ts': '', '!x.ts': '', 'a{1,3}.ts': '' })
    expect((await glob({ pattern: 'a(b|c).ts' })).lines).toEqual(['a(b|c).ts'])
    expect((await glob({ pattern: 'a+b.ts' })).lines).toEqual(['a+b.ts'])
    expect((await glob({ pattern: '!x.ts' })).lines).toEqual(['!x.ts'])
    expect((await glob({ pattern: '[!i]*.ts' })).lines).toEqual([
      '!x.ts',
      'a(b|c).ts',
      'a+b.ts',
      'aab.ts',
      'ab.ts',
      'a{1,3}.ts',
    ])
    expect((await glob({ pattern: '[[:alpha:]]b.ts' })).lines).toEqual(['ab.ts'])
  })

  it('accepts odd but valid patterns: a trailing slash, non-ASCII, spaces', async () => {
    ws.write({ 'é x.ts': '', '日本語.md': '' })
    expect((await glob({ pattern: 'src/' })).lines).toEqual(['No files found'])
    expect((await glob({ pattern: 'é *.ts' })).lines).toEqual(['é x.ts'])
    expect((await glob({ pattern: '日本*' })).lines).toEqual(['日本語.md'])
  })

  it('caps the results', async () => {
    const { r, lines } = await glob({ pattern: '**', max_results: 2 })
    expect(lines).toEqual(['.gitignore', 'README.md', '(results truncated at 2 files; narrow the pattern or path)'])
    expect(r.data).toEqual({ count: 2, truncated: true })
  })

  it('refuses a search path outside the workspace, and a file as search path', async () => {
    const out = await glob({ pattern: '*', path: '..' })
    expect(out.r.ok).toBe(false)
    expect(out.ctx.violations).toHaveLength(1)
    expect((await glob({ pattern: '*', path: 'index.ts' })).r).toEqual({
      ok: false,
      error: 'index.ts is not a directory',
    })
  })
})
