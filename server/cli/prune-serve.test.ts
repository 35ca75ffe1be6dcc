/**
 * scripts/prune-serve.mjs (the serving install's last step, docs/decisions/0425-build-then-prune.md):
 * on a made-up checkout in a temporary directory, node_modules keeps the server package's
 * run-time closure (dependencies, installed optional dependencies, optional peers, nested
 * packages, the workspace link) and loses the rest, with dangling .bin links and npm's record.
 */
import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('../../scripts/prune-serve.mjs', import.meta.url))
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function pkg(dir: string, manifest: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest))
  writeFileSync(join(dir, 'index.js'), '')
}

/** A checkout: server/package.json and an installed node_modules. */
function checkout(serverDeps: Record<string, string> = { rg: '1' }): string {
  const root = mkdtempSync(join(tmpdir(), 'chimera-prune-'))
  dirs.push(root)
  mkdirSync(join(root, 'scripts'))
  copyFileSync(script, join(root, 'scripts', 'prune-serve.mjs'))
  pkg(join(root, 'server'), {
    name: '@chimera-agent/cli',
    dependencies: serverDeps,
    peerDependencies: { 'lang-server': '1', 'absent-server': '1' },
    peerDependenciesMeta: { 'lang-server': { optional: true }, 'absent-server': { optional: true } },
  })
  mkdirSync(join(root, 'server', 'bin'))
  writeFileSync(join(root, 'server', 'bin', 'chimera.mjs'), '')
  const nm = join(root, 'node_modules')
  pkg(join(nm, 'rg'), {
    name: 'rg',
    dependencies: { 'rg-dep': '1' },
    optionalDependencies: { 'rg-linux': '1', 'rg-darwin': '1' },
  })
  pkg(join(nm, 'rg-dep'), { name: 'rg-dep' })
  pkg(join(nm, 'rg-linux'), { name: 'rg-linux' })
  pkg(join(nm, 'lang-server'), { name: 'lang-server', dependencies: { inner: '2' } })
  pkg(join(nm, 'lang-server', 'node_modules', 'inner'), { name: 'inner' })
  pkg(join(nm, 'inner'), { name: 'inner' })
  pkg(join(nm, 'esbuild'), { name: 'esbuild' })
  pkg(join(nm, '@scope', 'bundled'), { name: '@scope/bundled' })
  mkdirSync(join(nm, '@chimera-agent'))
  symlinkSync('../../server', join(nm, '@chimera-agent', 'cli'))
  mkdirSync(join(nm, '.bin'))
  symlinkSync('../@chimera-agent/cli/bin/chimera.mjs', join(nm, '.bin', 'chimera'))
  symlinkSync('../esbuild/index.js', join(nm, '.bin', 'esbuild'))
  writeFileSync(join(nm, '.package-lock.json'), '{}')
  return root
}

const run = (root: string, ...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'prune-serve.mjs'), ...args], { encoding: 'utf8' })

const listing = (root: string): string[] => {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name)
      if (e.name === 'package.json' || e.isSymbolicLink()) out.push(path.slice(root.length + 1))
      else if (e.isDirectory()) walk(path)
    }
  }
  walk(join(root, 'node_modules'))
  return out.sort()
}

describe('prune-serve', () => {
  it('keeps the run-time closure of the server package and removes what only the build needed', () => {
    const root = checkout()
    const r = run(root)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^removed 3 packages \(.* MB\) the build needed; node_modules keeps /)
    expect(listing(root)).toEqual(
      [
        'node_modules/.bin/chimera',
        'node_modules/@chimera-agent/cli',
        'node_modules/lang-server/node_modules/inner/package.json',
        'node_modules/lang-server/package.json',
        'node_modules/rg-dep/package.json',
        'node_modules/rg-linux/package.json',
        'node_modules/rg/package.json',
      ].sort(),
    )
    expect(existsSync(join(root, 'node_modules', '@scope'))).toBe(false)
    expect(existsSync(join(root, 'node_modules', '.package-lock.json'))).toBe(false)
    expect(existsSync(join(root, 'server', 'bin', 'chimera.mjs'))).toBe(true)
  })

  it('--dry-run removes nothing', () => {
    const root = checkout()
    const before = listing(root)
    const r = run(root, '--dry-run')
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^would remove 3 packages/)
    expect(listing(root)).toEqual(before)
  })

  it('refuses, removing nothing, when a run-time dependency is not installed', () => {
    const root = checkout({ rg: '1', missing: '1' })
    const before = listing(root)
    const r = run(root)
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain('missing is not installed (needed at run time)')
    expect(listing(root)).toEqual(before)
  })
})
