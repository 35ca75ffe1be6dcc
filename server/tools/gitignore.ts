/**
 * .gitignore handling for the workspace walkers (Grep, Glob, list_files), on the `ignore`
 * package (git's pattern semantics). Each directory's .gitignore is a layer applying to paths
 * beneath it; layers are consulted root first, and the deepest layer with a matching rule
 * decides (so a nested `!pattern` re-includes). `.git` and `node_modules` are always skipped.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Ignore } from 'ignore'

/** Names never descended into or listed, whatever the .gitignore files say. */
export const ALWAYS_SKIPPED: ReadonlySet<string> = new Set(['.git', 'node_modules'])

/** The rules of one .gitignore: `base` is its directory relative to the walk root ('' = root). */
export interface IgnoreLayer {
  base: string
  rules: Ignore
}

/** The parsed `.gitignore` of `dirAbs` (relative path `dirRel`), or undefined when it has none. */
export async function loadIgnoreLayer(dirAbs: string, dirRel: string): Promise<IgnoreLayer | undefined> {
  let text: string
  try {
    text = await readFile(join(dirAbs, '.gitignore'), 'utf8')
  } catch {
    return undefined
  }
  // The matcher loads with the first .gitignore read (a file tool's walk), not at start-up.
  const { default: ignore } = await import('ignore')
  return { base: dirRel, rules: ignore({ ignorecase: false }).add(text) }
}

/**
 * True when `rel` (a `/`-separated path relative to the walk root, never empty) is ignored by
 * `layers`; `isDir` makes directory-only patterns (`build/`) apply.
 */
export function isIgnored(layers: readonly IgnoreLayer[], rel: string, isDir: boolean): boolean {
  let ignored = false
  for (const layer of layers) {
    let sub: string
    if (layer.base === '') sub = rel
    else if (rel.startsWith(`${layer.base}/`)) sub = rel.slice(layer.base.length + 1)
    else continue
    if (sub === '') continue
    const r = layer.rules.test(isDir ? `${sub}/` : sub)
    if (r.ignored) ignored = true
    else if (r.unignored) ignored = false
  }
  return ignored
}
