/**
 * Edit: exactly one match replaced with a diff summary; no match and several matches are errors
 * (file untouched); replace_all; `$` in the replacement is literal; sandbox refusals.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { findOccurrences, replaceAt, replacementDiff } from './edit-diff.ts'
import { editTool } from './edit.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import type { SandboxMode } from './types.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({ 'f.ts': 'const a = 1\nconst b = 2\nconst a2 = 1\n' })
})
afterEach(() => ws.cleanup())

const edit = async (
  args: { path: string; old_string: string; new_string: string; replace_all?: boolean },
  sandbox: SandboxMode = 'workspace-write',
) => {
  const ctx = recordingContext(ws.cwd, sandbox)
  return { ctx, r: await editTool.run({ replace_all: false, ...args }, ctx) }
}
const content = (): string => readFileSync(join(ws.cwd, 'f.ts'), 'utf8')

describe('Edit', () => {
  it('replaces a unique match and returns the count and a diff', async () => {
    const { r } = await edit({ path: 'f.ts', old_string: 'const b = 2', new_string: 'const b = 3\nconst c = 4' })
    expect(r.ok).toBe(true)
    expect(content()).toBe('const a = 1\nconst b = 3\nconst c = 4\nconst a2 = 1\n')
    expect(r.data).toEqual({
      path: 'f.ts',
      replacements: 1,
      diff: '--- a/f.ts\n+++ b/f.ts\n@@ -2,1 +2,2 @@\n-const b = 2\n+const b = 3\n+const c = 4',
    })
    if (r.ok) expect(r.output).toMatch(/^Edited f\.ts: 1 replacement\n--- a\/f\.ts/)
  })

  it('tells the file-change tracker around the write, and not when nothing changes', async () => {
    const { ctx } = await edit({ path: 'f.ts', old_string: 'const b = 2', new_string: 'const b = 3' })
    expect(ctx.fileEvents).toEqual([`will ${join(ws.cwd, 'f.ts')}`, `changed ${join(ws.cwd, 'f.ts')}`])
    expect((await edit({ path: 'f.ts', old_string: 'absent', new_string: 'x' })).ctx.fileEvents).toEqual([])
  })

  it('fails naming the file when there is no match', async () => {
    const { r } = await edit({ path: 'f.ts', old_string: 'nothing like this', new_string: 'x' })
    expect(r).toMatchObject({ ok: false, error: 'old_string was not found in f.ts' })
    expect(content()).toBe('const a = 1\nconst b = 2\nconst a2 = 1\n')
  })

  it('fails with the count on several matches unless replace_all', async () => {
    const { r } = await edit({ path: 'f.ts', old_string: '= 1', new_string: '= 9' })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(/^old_string occurs 2 times in f\.ts; .*replace_all/)
    expect(content()).toContain('const a = 1')
    const all = await edit({ path: 'f.ts', old_string: 'const', new_string: 'let', replace_all: true })
    expect(all.r).toMatchObject({ ok: true, data: { replacements: 3 } })
    expect(content()).toBe('let a = 1\nlet b = 2\nlet a2 = 1\n')
  })

  it('inserts the replacement literally (no $ patterns)', async () => {
    await edit({ path: 'f.ts', old_string: 'const b = 2', new_string: "const b = '$&$1$$'" })
    expect(content()).toContain("const b = '$&$1$$'")
  })

  it('rejects identical strings, missing files and binary files', async () => {
    expect((await edit({ path: 'f.ts', old_string: 'a', new_string: 'a' })).r).toMatchObject({
      ok: false,
      error: expect.stringContaining('identical'),
    })
    expect((await edit({ path: 'nope.ts', old_string: 'a', new_string: 'b' })).r).toEqual({
      ok: false,
      error: 'file not found: nope.ts',
    })
    ws.write({ 'b.bin': Buffer.from('a\0b') })
    expect((await edit({ path: 'b.bin', old_string: 'a', new_string: 'b' })).r).toMatchObject({
      ok: false,
      error: expect.stringContaining('binary'),
    })
  })

  it('is refused in read-only and outside the workspace', async () => {
    const ro = await edit({ path: 'f.ts', old_string: 'const b', new_string: 'let b' }, 'read-only')
    expect(ro.r.ok).toBe(false)
    expect(ro.ctx.violations).toHaveLength(1)
    expect(content()).toContain('const b')
    const out = await edit({ path: '../outside/x', old_string: 'a', new_string: 'b' })
    expect(out.r.ok).toBe(false)
    expect(out.ctx.violations).toHaveLength(1)
  })
})

describe('edit-diff', () => {
  it('finds non-overlapping occurrences and replaces them', () => {
    expect(findOccurrences('aaaa', 'aa')).toEqual([0, 2])
    expect(replaceAt('aaaa', 'aa', 'b', [0, 2])).toBe('bb')
  })
  it('merges replacements on one line into one hunk and tracks line shifts', () => {
    const text = 'x x\ny\nx\n'
    const d = replacementDiff('t', text, 'x', 'z\nz', findOccurrences(text, 'x'))
    expect(d).toBe(
      ['--- a/t', '+++ b/t', '@@ -1,1 +1,3 @@', '-x x', '+z', '+z z', '+z', '@@ -3,1 +5,2 @@', '-x', '+z', '+z'].join(
        '\n',
      ),
    )
  })
})
