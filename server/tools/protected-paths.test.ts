/**
 * Protected and read-only paths in the file tools, in every mode: a protected path (CHIMERA_HOME,
 * here inside the workspace) is neither read, written, searched nor listed — by its own name, by
 * `..`, or through a symlink; a read-only path (`<cwd>/.chimera`) is read but never created,
 * changed or deleted. Refusals are sandbox violations.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { editTool } from './edit.ts'
import { globTool } from './glob.ts'
import { grepTool } from './grep.ts'
import { listFilesTool } from './list-files.ts'
import { readTool } from './read.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import type { SandboxMode } from './types.ts'
import { writeTool } from './write.ts'

let ws: TempWorkspace
let home: string
let config: string
beforeEach(() => {
  ws = tempWorkspace()
  home = join(ws.cwd, 'state')
  config = join(ws.cwd, '.chimera')
  ws.write({
    'state/permissions/audit.jsonl': 'needle audit\n',
    '.chimera/config.json': '{"needle":1}\n',
    'free.txt': 'needle free\n',
  })
  symlinkSync(join(home, 'permissions'), join(ws.cwd, 'perm-link'))
})
afterEach(() => ws.cleanup())

const ctxFor = (mode: SandboxMode) => {
  const ctx = recordingContext(ws.cwd, mode)
  ctx.protectedPaths = [home]
  ctx.readOnlyPaths = [config]
  return ctx
}

describe.each(['workspace-write', 'danger-full-access', 'read-only'] as const)(
  'protected and read-only paths (%s)',
  (mode) => {
    it('a protected path is never read, by name, by .. or through a symlink', async () => {
      for (const path of [
        'state/permissions/audit.jsonl',
        'free/../state/permissions/audit.jsonl',
        'perm-link/audit.jsonl',
        join(home, 'permissions', 'audit.jsonl'),
      ]) {
        const ctx = ctxFor(mode)
        const r = await readTool.run({ path }, ctx)
        expect(r, path).toMatchObject({ ok: false, error: expect.stringContaining('protected path') })
        expect(ctx.violations, path).toHaveLength(1)
      }
    })

    it('a protected path is never searched or listed', async () => {
      const grep = await grepTool.run({ case_insensitive: false, max_results: 200, pattern: 'needle' }, ctxFor(mode))
      expect(grep.ok && grep.output.split('\n')).toEqual([
        '.chimera/config.json:1:{"needle":1}',
        'free.txt:1:needle free',
      ])
      const glob = await globTool.run({ max_results: 1000, pattern: '**' }, ctxFor(mode))
      expect(glob.ok && glob.output).not.toContain('state')
      const list = await listFilesTool.run({ max_entries: 1000, recursive: true }, ctxFor(mode))
      expect(list.ok && list.output).not.toContain('state')
      for (const r of [
        await grepTool.run({ case_insensitive: false, max_results: 200, pattern: 'x', path: 'state' }, ctxFor(mode)),
        await listFilesTool.run({ recursive: false, max_entries: 1000, path: 'state' }, ctxFor(mode)),
        await globTool.run({ max_results: 1000, pattern: '*', path: 'state' }, ctxFor(mode)),
      ]) {
        expect(r).toMatchObject({ ok: false, error: expect.stringContaining('protected path') })
      }
    })

    it('a read-only path is readable', async () => {
      expect(await readTool.run({ path: '.chimera/config.json' }, ctxFor(mode))).toMatchObject({ ok: true })
    })
  },
)

describe.each(['workspace-write', 'danger-full-access'] as const)(
  'writes to protected and read-only paths (%s)',
  (mode) => {
    it('Write and Edit refuse protected and read-only paths, and create nothing', async () => {
      const targets = [
        'state/permissions/audit.jsonl',
        'perm-link/forged.jsonl',
        'state/new.txt',
        '.chimera/config.json',
        '.chimera/other.json',
        '.chimera',
        'x/../.chimera/y',
      ]
      for (const path of targets) {
        const ctx = ctxFor(mode)
        const w = await writeTool.run({ path, content: '{"permission":{"Bash":"allow"}}' }, ctx)
        expect(w, path).toMatchObject({ ok: false, error: expect.stringMatching(/protected path|read-only path/) })
        const e = await editTool.run({ path, old_string: 'needle', new_string: 'pwned', replace_all: false }, ctx)
        expect(e, path).toMatchObject({ ok: false, error: expect.stringMatching(/protected path|read-only path/) })
        expect(ctx.violations, path).toHaveLength(2)
        expect(ctx.fileEvents, path).toEqual([])
      }
      expect(readFileSync(join(home, 'permissions', 'audit.jsonl'), 'utf8')).toBe('needle audit\n')
      expect(readFileSync(join(config, 'config.json'), 'utf8')).toBe('{"needle":1}\n')
      for (const p of ['permissions/forged.jsonl', 'new.txt']) expect(existsSync(join(home, p))).toBe(false)
      expect(existsSync(join(config, 'other.json'))).toBe(false)
    })

    it('a read-only path that does not exist yet cannot be created', async () => {
      const cfg = join(ws.cwd, 'sub', '.chimera')
      mkdirSync(join(ws.cwd, 'sub'))
      const ctx = recordingContext(ws.cwd, mode)
      ctx.readOnlyPaths = [cfg]
      expect(await writeTool.run({ path: 'sub/.chimera/config.json', content: '{}' }, ctx)).toMatchObject({ ok: false })
      expect(existsSync(cfg)).toBe(false)
    })

    it('paths beside them stay writable', async () => {
      writeFileSync(join(ws.cwd, 'state-like.txt'), '')
      expect(await writeTool.run({ path: 'state-like.txt', content: 'ok' }, ctxFor(mode))).toMatchObject({ ok: true })
      expect(await writeTool.run({ path: '.chimera-other/x', content: 'ok' }, ctxFor(mode))).toMatchObject({ ok: true })
    })
  },
)
