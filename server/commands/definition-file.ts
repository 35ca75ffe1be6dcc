/**
 * Reading command and agent definition files (`.opencode/command/*.md`, `.opencode/agent/*.md`)
 * the way the file tools open files (docs/decisions/0022-verified-opens.md), but synchronously:
 * the core's command renderer is synchronous. The model's Bash may write in the project, so a
 * definition file or a directory on its way may be a symlink the server must not follow out:
 *
 * - a scope has a root (the project's working directory, or the user's home for the user scope)
 *   and the protected paths (`CHIMERA_HOME`), all real paths;
 * - a path is resolved to its real path, which must lie in the root and outside the protected
 *   paths (a symlink that stays inside still works);
 * - that real path is then walked one component at a time from a handle on the root with
 *   `O_NOFOLLOW` (on Linux through `/proc/self/fd/<dir>/<name>`, an `openat`), so a directory
 *   swapped for a symlink in between is refused, and only a regular file is opened
 *   (`O_NOFOLLOW | O_NONBLOCK`, confirmed by `fstat`); the descriptor's real path is checked again.
 *
 * Without /proc the open is by path with `O_NOFOLLOW`, checked by comparing inodes.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
  type Stats,
} from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { chimeraHome } from '../store/paths.ts'
import { isInside } from '../tools/paths.ts'
import { O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_PATH, USE_PROC_FD } from '../tools/safe-open.ts'

/** Where definition files of one scope may be read from. */
export interface DefinitionScope {
  /** The real directory every read stays in. */
  root: string
  /** Real paths never read (`CHIMERA_HOME`). */
  protectedPaths: readonly string[]
}

export type DefinitionRead =
  | { ok: true; text: string; real: string; stat: Stats }
  | { ok: false; kind: 'missing' | 'directory' | 'refused' | 'not_regular' | 'too_large' | 'error'; reason: string }

const DIR_FLAGS = O_PATH | O_DIRECTORY | O_NOFOLLOW

const fail = (kind: Exclude<DefinitionRead, { ok: true }>['kind'], reason: string): DefinitionRead => ({
  ok: false,
  kind,
  reason,
})
const code = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code

function realOrSelf(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return resolve(p)
  }
}

/** The protected paths of every scope: `CHIMERA_HOME` (as written and as its real path). */
export function protectedDefinitionPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = resolve(chimeraHome(env))
  return [...new Set([home, realOrSelf(home)])]
}

/** The project scope of `cwd`: reads stay in the working directory's real path. */
export function projectScope(cwd: string, env: NodeJS.ProcessEnv = process.env): DefinitionScope {
  return { root: realOrSelf(cwd), protectedPaths: protectedDefinitionPaths(env) }
}

/**
 * The user scope of `dir` (`~/.opencode/command`, or a directory the user named): reads stay in
 * the user's home when the directory lies there (dotfiles linked from elsewhere in the home
 * work), else in the directory itself.
 */
export function userScope(dir: string, env: NodeJS.ProcessEnv = process.env): DefinitionScope {
  const home = realOrSelf(homedir())
  const real = realOrSelf(dir)
  return { root: isInside(home, real) && home !== '/' ? home : real, protectedPaths: protectedDefinitionPaths(env) }
}

/** Why the real path `real` may not be read in `scope`, if it may not. */
function outOfScope(real: string, scope: DefinitionScope): string | undefined {
  // Where it leads is not said: the answer may reach clients that must not learn host paths.
  if (!isAbsolute(real) || !isInside(scope.root, real)) return `it leads outside ${scope.root}`
  const prot = scope.protectedPaths.find((p) => isInside(p, real))
  if (prot !== undefined) return `it lies in CHIMERA_HOME, which is never read`
  return undefined
}

/** Resolve `path` and check it; its real path, or why not. */
function resolveChecked(path: string, scope: DefinitionScope): { real: string } | DefinitionRead {
  let real: string
  try {
    real = realpathSync(path)
  } catch (e) {
    return code(e) === 'ENOENT' || code(e) === 'ENOTDIR'
      ? fail('missing', `${path} does not exist`)
      : fail('error', `${path}: ${(e as Error).message}`)
  }
  const why = outOfScope(real, scope)
  return why === undefined ? { real } : fail('refused', `${path}: ${why}`)
}

/** An O_PATH descriptor on the directory `realDir` (inside the root), reached without following a link. */
function openDirAt(realDir: string, scope: DefinitionScope): number | DefinitionRead {
  let fd = openSync(scope.root, DIR_FLAGS)
  try {
    if (readlinkSync(`/proc/self/fd/${fd}`) !== scope.root)
      return fail('refused', `${scope.root} changed while it was being opened`)
    const rel = relative(scope.root, realDir)
    for (const comp of rel === '' ? [] : rel.split(sep)) {
      let next: number
      try {
        next = openSync(`/proc/self/fd/${fd}/${comp}`, DIR_FLAGS)
      } catch (e) {
        if (code(e) === 'ELOOP')
          return fail(
            'refused',
            `the directory ${comp} on the way to ${realDir} is a symbolic link (it changed after it was checked)`,
          )
        if (code(e) === 'ENOENT') return fail('missing', `${realDir} does not exist`)
        throw e
      }
      closeSync(fd)
      fd = next
    }
    const out = fd
    fd = -1
    return out
  } finally {
    if (fd >= 0) closeSync(fd)
  }
}

/** Read at most `max` bytes from `fd`; undefined when there is more. */
function readAtMost(fd: number, max: number): Buffer | undefined {
  const buf = Buffer.allocUnsafe(max + 1)
  let total = 0
  for (;;) {
    const n = readSync(fd, buf, total, max + 1 - total, total)
    if (n === 0) break
    total += n
    if (total > max) return undefined
  }
  return buf.subarray(0, total)
}

/**
 * The text of the definition file `path` (UTF-8, at most `maxBytes`), read only when it really
 * is a regular file inside `scope` (see the file header).
 */
export function readDefinitionFile(path: string, scope: DefinitionScope, maxBytes: number): DefinitionRead {
  try {
    const r = resolveChecked(path, scope)
    if (!('real' in r)) return r
    const real = r.real
    let fd: number
    if (USE_PROC_FD) {
      const dir = openDirAt(resolve(real, '..'), scope)
      if (typeof dir !== 'number') return dir
      try {
        const at = `/proc/self/fd/${dir}/${real.slice(real.lastIndexOf(sep) + 1)}`
        const pre = lstatSync(at, { throwIfNoEntry: false })
        if (!pre) return fail('missing', `${path} does not exist`)
        if (pre.isSymbolicLink()) return fail('refused', `${path} is a symbolic link (it changed after it was checked)`)
        if (pre.isDirectory()) return fail('directory', `${path} is a directory`)
        if (!pre.isFile()) return fail('not_regular', 'not a regular file')
        fd = openSync(at, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
      } finally {
        closeSync(dir)
      }
    } else {
      const pre = lstatSync(real)
      if (pre.isDirectory()) return fail('directory', `${path} is a directory`)
      if (!pre.isFile()) return fail('not_regular', 'not a regular file')
      fd = openSync(real, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    }
    try {
      const st = fstatSync(fd)
      if (!st.isFile()) return fail('not_regular', 'not a regular file')
      const again = USE_PROC_FD ? readlinkSync(`/proc/self/fd/${fd}`) : real
      if (!USE_PROC_FD) {
        const now = statSync(real)
        if (now.ino !== st.ino || now.dev !== st.dev)
          return fail('refused', `${path} changed while it was being opened`)
      }
      const why = outOfScope(again, scope)
      if (why !== undefined) return fail('refused', `${path}: ${why}`)
      if (st.size > maxBytes) return fail('too_large', `larger than ${maxBytes} bytes`)
      const buf = readAtMost(fd, maxBytes)
      if (!buf) return fail('too_large', `larger than ${maxBytes} bytes`)
      return { ok: true, text: buf.toString('utf8'), real: again, stat: st }
    } finally {
      closeSync(fd)
    }
  } catch (e) {
    if (code(e) === 'ELOOP') return fail('refused', `${path} is a symbolic link (it changed after it was checked)`)
    if (code(e) === 'ENOENT') return fail('missing', `${path} does not exist`)
    return fail('error', `cannot read: ${(e as Error).message}`)
  }
}

/** The entry names of the definition directory `dir`, listed only when it lies inside `scope`. */
export function listDefinitionDir(
  dir: string,
  scope: DefinitionScope,
): { ok: true; names: string[] } | Exclude<DefinitionRead, { ok: true }> {
  try {
    const r = resolveChecked(dir, scope)
    if (!('real' in r)) return r as Exclude<DefinitionRead, { ok: true }>
    if (!USE_PROC_FD) return { ok: true, names: readdirSync(r.real) }
    const fd = openDirAt(r.real, scope)
    if (typeof fd !== 'number') return fd as Exclude<DefinitionRead, { ok: true }>
    try {
      return { ok: true, names: readdirSync(`/proc/self/fd/${fd}`) }
    } finally {
      closeSync(fd)
    }
  } catch (e) {
    if (code(e) === 'ENOENT' || code(e) === 'ENOTDIR')
      return { ok: false, kind: 'missing', reason: `${dir} does not exist` }
    return { ok: false, kind: 'error', reason: `cannot read the directory: ${(e as Error).message}` }
  }
}
