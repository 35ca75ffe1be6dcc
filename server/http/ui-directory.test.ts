/**
 * Which built console the server serves: the CLI package's own (server/dist/ui beside its bundle)
 * when it is built, else the checkout's (dist/ui at the root), found from the module's location.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { uiDirectory } from './ui.ts'

let tree: string | undefined
afterEach(() => {
  if (tree) rmSync(tree, { recursive: true, force: true })
  tree = undefined
})

/** A checkout: root package.json, the server workspace's package.json, and the given built consoles. */
function checkout(built: string[]): string {
  tree = mkdtempSync(join(tmpdir(), 'chimera-ui-dir-'))
  writeFileSync(join(tree, 'package.json'), '{}')
  mkdirSync(join(tree, 'server/http'), { recursive: true })
  writeFileSync(join(tree, 'server/package.json'), '{}')
  for (const dir of built) {
    mkdirSync(join(tree, dir), { recursive: true })
    writeFileSync(join(tree, dir, 'index.html'), '<!doctype html>')
  }
  return tree
}

describe('uiDirectory', () => {
  it('from the sources, with only the checkout built: the root dist/ui', () => {
    const root = checkout(['dist/ui'])
    expect(uiDirectory(join(root, 'server/http/ui.ts'))).toBe(join(root, 'dist/ui'))
  })

  it("from the package's bundle: its own dist/ui", () => {
    const root = checkout(['dist/ui', 'server/dist/ui'])
    expect(uiDirectory(join(root, 'server/dist/chunks/chunk.mjs'))).toBe(join(root, 'server/dist/ui'))
  })

  it('nothing built: the nearest package.json dist/ui (which answers "not built")', () => {
    const root = checkout([])
    expect(uiDirectory(join(root, 'server/http/ui.ts'))).toBe(join(root, 'server/dist/ui'))
  })
})
