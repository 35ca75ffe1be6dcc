/**
 * The workspace walker behind Grep, Glob and list_files: entries beneath a start directory in
 * name order, depth first, skipping `.git`, `node_modules` and whatever the .gitignore files
 * (root and nested) exclude. Symlinks are reported but never descended into, so a walk cannot
 * leave the workspace or loop. FIFOs, sockets and devices (and symlinks to them) are skipped:
 * nothing downstream may open them. Protected paths (`CHIMERA_HOME`) are neither listed nor
 * descended into.
 */
import type { Dirent } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { ALWAYS_SKIPPED, isIgnored, loadIgnoreLayer, type IgnoreLayer } from './gitignore.ts'
import { isInside } from '../platform/path-inside.ts'

/** One walked entry. */
export interface WalkEntry {
  abs: string
  /** `/`-separated path relative to the walk root. */
  rel: string
  /** `/`-separated path relative to the start directory. */
  relToStart: string
  name: string
  /** A directory, or a symlink to one. */
  isDir: boolean
  isSymlink: boolean
}

/** What to walk. */
export interface WalkOptions {
  /** The real workspace root: .gitignore files from here down apply, paths are relative to it. */
  root: string
  /** The real directory to start from (inside `root`; else it becomes its own root). */
  start: string
  /** Descend into subdirectories (default true). */
  recursive?: boolean
  /** Stop early when aborted. */
  signal?: AbortSignal
  /** Real paths skipped with everything beneath them (the protected paths). */
  skip?: readonly string[]
  /** The start directory's entries by name, when the caller listed it already (`confineDirectory`). */
  startListing?: Dirent[]
}

const toPosix = (p: string): string => (sep === '/' ? p : p.split(sep).join('/'))

/** The ignore layers of `root` and each directory down to `start`, exclusive. */
async function ancestorLayers(root: string, start: string): Promise<IgnoreLayer[]> {
  const layers: IgnoreLayer[] = []
  const rel = toPosix(relative(root, start))
  const parts = rel === '' ? [] : rel.split('/')
  for (let i = 0; i < parts.length; i++) {
    const dirRel = parts.slice(0, i).join('/')
    const layer = await loadIgnoreLayer(join(root, ...parts.slice(0, i)), dirRel)
    if (layer) layers.push(layer)
  }
  return layers
}

/**
 * The ignore layer of a directory just listed: its .gitignore is read only when the listing has
 * one (no failed open per directory walked, the common case).
 */
function listedLayer(dirAbs: string, dirRel: string, dirents: readonly Dirent[]): Promise<IgnoreLayer | undefined> {
  return dirents.some((d) => d.name === '.gitignore') ? loadIgnoreLayer(dirAbs, dirRel) : Promise.resolve(undefined)
}

/** The entries of `dir` in name order, as a walk lists a directory (rejects as `readdir` does). */
export async function listByName(dir: string): Promise<Dirent[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** The entries of `dir` in name order; undefined when it cannot be read. */
function listSorted(dir: string): Promise<Dirent[] | undefined> {
  return listByName(dir).catch(() => undefined)
}

/**
 * Walk beneath `opts.start`. When the start directory is itself ignored (the caller named it
 * explicitly), only the .gitignore files inside it apply.
 */
export async function* walk(opts: WalkOptions): AsyncGenerator<WalkEntry> {
  const root = isInside(opts.root, opts.start) ? opts.root : opts.start
  const startRel = toPosix(relative(root, opts.start))
  // The start directory is listed while its ancestors' ignore files are read.
  const [firstListing, above] = await Promise.all([
    opts.startListing ?? listSorted(opts.start),
    ancestorLayers(root, opts.start),
  ])
  const own = firstListing && (await listedLayer(opts.start, startRel, firstListing))
  let layers = own ? [...above, own] : above
  if (
    startRel !== '' &&
    isIgnored(
      layers.filter((l) => l.base !== startRel),
      startRel,
      true,
    )
  ) {
    layers = layers.filter((l) => l.base === startRel)
  }
  const recursive = opts.recursive ?? true

  async function* visit(
    dirAbs: string,
    dirRel: string,
    inherited: IgnoreLayer[],
    isStart: boolean,
  ): AsyncGenerator<WalkEntry> {
    let here = inherited
    const dirents = isStart ? firstListing : await listSorted(dirAbs)
    if (!dirents) return
    if (!isStart) {
      const layer = await listedLayer(dirAbs, dirRel, dirents)
      if (layer) here = [...inherited, layer]
    }
    for (const d of dirents) {
      if (opts.signal?.aborted) return
      const name = d.name
      if (ALWAYS_SKIPPED.has(name)) continue
      const abs = join(dirAbs, name)
      const rel = dirRel === '' ? name : `${dirRel}/${name}`
      if (opts.skip?.some((p) => isInside(p, abs))) continue
      const isSymlink = d.isSymbolicLink()
      let isDir = d.isDirectory()
      if (isSymlink) {
        try {
          const target = await stat(abs)
          if (!target.isDirectory() && !target.isFile()) continue
          isDir = target.isDirectory()
        } catch {
          isDir = false
        }
      } else if (!isDir && !d.isFile()) continue
      if (isIgnored(here, rel, isDir)) continue
      const relToStart = startRel === '' ? rel : rel.slice(startRel.length + 1)
      yield { abs, rel, relToStart, name, isDir, isSymlink }
      if (isDir && !isSymlink && recursive) yield* visit(abs, rel, here, false)
    }
  }

  yield* visit(opts.start, startRel, layers, true)
}
