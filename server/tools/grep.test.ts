/**
 * Grep: `path:line:text` results relative to the cwd; root and nested .gitignore (with
 * negation); `.git` and `node_modules` always skipped; binary files skipped; glob filter;
 * case-insensitivity; the max_results cap; invalid regexes; confinement of the search path and
 * of symlinked files; ripgrep's regex dialect, linear time on the ReDoS pattern of the attack run,
 * and a search that runs out of process (the event loop answers and a cancel kills it).
 */
import { spawnSync } from 'node:child_process'
import { openSync, closeSync, constants, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GrepInput } from '../../generated/tools/tools.gen.ts'
import { grepTool } from './grep.ts'
import { supervised } from '../platform/supervisor.ts'
import { locateRipgrep, runRipgrep } from './ripgrep.ts'
import { processesMatching, recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'

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

const grep = async (
  args: Partial<GrepInput> & { pattern: string },
  sandbox: 'workspace-write' | 'read-only' = 'workspace-write',
) => {
  const ctx = recordingContext(ws.cwd, sandbox)
  const r = await grepTool.run({ case_insensitive: false, max_results: 200, ...args }, ctx)
  return { ctx, r, lines: r.ok ? r.output.split('\n') : [] }
}

describe('Grep', () => {
  it('returns path:line:text, honouring root and nested .gitignore and the fixed skips', async () => {
    const { r, lines } = await grep({ pattern: 'needle' })
    expect(r.ok).toBe(true)
    expect(lines).toEqual([
      'a.txt:2:needle one',
      'keep.log:1:needle kept',
      'src/b.ts:1:const needle = 1',
      'src/deep/c.ts:1:needle deep',
      'src/deep/d.js:1:needle js',
    ])
    expect(r.data).toMatchObject({ matches: 5, truncated: false })
  })

  it('is case-insensitive on request', async () => {
    const { lines } = await grep({ pattern: '^needle upper', case_insensitive: true })
    expect(lines).toEqual(['src/b.ts:2:NEEDLE upper'])
  })

  it('filters by glob: basename globs at any depth, path globs relative to the search path', async () => {
    expect((await grep({ pattern: 'needle', glob: '*.ts' })).lines).toEqual([
      'src/b.ts:1:const needle = 1',
      'src/deep/c.ts:1:needle deep',
    ])
    expect((await grep({ pattern: 'needle', glob: 'src/deep/**' })).lines).toEqual([
      'src/deep/c.ts:1:needle deep',
      'src/deep/d.js:1:needle js',
    ])
    expect((await grep({ pattern: 'needle', glob: '**/*.{js,txt}' })).lines).toEqual([
      'a.txt:2:needle one',
      'src/deep/d.js:1:needle js',
    ])
    expect((await grep({ pattern: 'needle', path: 'src', glob: 'deep/*.ts' })).lines).toEqual([
      'src/deep/c.ts:1:needle deep',
    ])
  })

  it('searches a subdirectory or a single file, paths still relative to the cwd', async () => {
    expect((await grep({ pattern: 'needle', path: 'src/deep' })).lines).toEqual([
      'src/deep/c.ts:1:needle deep',
      'src/deep/d.js:1:needle js',
    ])
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

describe('Grep on ripgrep', () => {
  it('uses the ripgrep binary shipped by @vscode/ripgrep', async () => {
    const rg = await locateRipgrep()
    expect(rg).toMatchObject({ ok: true, path: expect.stringMatching(/@vscode\/ripgrep-[^/]+\/bin\/rg(\.exe)?$/) })
  })

  it("speaks ripgrep's regex dialect: no look-around or backreferences, Unicode classes, CRLF lines", async () => {
    ws.write({ 'u.txt': 'αβγ greek\r\nplain line\r\n' })
    expect((await grep({ pattern: 'needle(?= one)' })).r).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^invalid regular expression \/needle\(\?= one\)\/: .*look-around/s),
    })
    expect((await grep({ pattern: '(n)eedle \\1' })).r).toMatchObject({
      ok: false,
      error: expect.stringContaining('backreferences are not supported'),
    })
    expect((await grep({ pattern: '^\\p{Greek}+ greek$', path: 'u.txt' })).lines).toEqual(['u.txt:1:αβγ greek'])
    expect((await grep({ pattern: '-v' })).r).toMatchObject({ ok: true, output: 'No matches found' })
  })

  it('runs the ReDoS pattern of the attack run in linear time: (a+)+$ on a line of 40 a and !', async () => {
    ws.write({ 'redos.txt': `${'a'.repeat(40)}!\n`.repeat(1000), 'hit.txt': `${'a'.repeat(40)}\n` })
    const { r, lines } = await grep({ pattern: '(a+)+$' })
    expect(r.ok).toBe(true)
    expect(lines).toEqual([`hit.txt:1:${'a'.repeat(40)}`])
  })

  it('cuts very long matched lines', async () => {
    ws.write({ 'long.txt': `needle${'x'.repeat(5000)}\n` })
    const { lines } = await grep({ pattern: 'needle', path: 'long.txt' })
    expect(lines).toEqual([`long.txt:1:needle${'x'.repeat(494)}…`])
  })

  it('a cancelled search stops at once and leaves no ripgrep behind', async () => {
    const ctx = recordingContext(ws.cwd)
    ctx.controller.abort()
    expect(await grepTool.run({ pattern: 'needle', case_insensitive: false, max_results: 200 }, ctx)).toEqual({
      ok: false,
      error: 'search cancelled',
    })
    expect(supervised('tool')).toEqual([])
  })

  it('searches out of process: while ripgrep waits on its input the event loop answers, and a cancel kills it', async () => {
    // A FIFO opened read-write never reaches end-of-file: ripgrep blocks reading it until killed.
    const fifo = join(ws.outside, 'never-ending')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK)
    try {
      const rg = await locateRipgrep()
      if (!rg.ok) throw new Error(rg.error)
      const controller = new AbortController()
      const search = runRipgrep({
        rg: rg.path,
        pattern: '(a+)+$',
        caseInsensitive: false,
        fds: [fd],
        signal: controller.signal,
        onMatch: () => true,
      })
      const until = Date.now() + 10_000
      while (processesMatching('(a+)+$').length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
      // The timers above ran while ripgrep was busy: the event loop is free.
      expect(processesMatching('(a+)+$')).toHaveLength(1)
      expect(supervised('tool')).toHaveLength(1)
      const ticked = await new Promise<boolean>((r) => setTimeout(() => r(true), 20))
      expect(ticked).toBe(true)
      controller.abort()
      expect(await search).toEqual({ ok: true, stopped: false, cancelled: true })
      expect(supervised('tool')).toEqual([])
      expect(processesMatching('(a+)+$')).toEqual([])
    } finally {
      closeSync(fd)
    }
  })
})
