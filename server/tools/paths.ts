/**
 * Workspace confinement for the file tools. A path (relative, absolute or `file://`) is resolved
 * to its real path — symlinks followed, `..` collapsed — and must land inside the real path of
 * the working directory unless the sandbox is `danger-full-access`. In `read-only` no write is
 * allowed anywhere. Files that do not exist yet are resolved through their nearest existing
 * ancestor, following dangling symlinks too, so a link to a not-yet-existing file outside the
 * workspace cannot be used to create it.
 */
import { lstat, readlink, realpath, stat } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorCode, errorText, fail } from './outcome.ts'
import type { SandboxMode, ToolContext, ToolOutcome } from './types.ts'

/** Options of {@link resolveInWorkspace}. */
export interface ResolveOptions {
  /** The tool will create or modify the path (refused in `read-only`). */
  forWrite?: boolean
  /** The sandbox mode; default `workspace-write`. */
  mode?: SandboxMode
}

/**
 * The result of resolving a path: the real absolute path and the real workspace root, or the
 * reason it was refused. `violation` marks refusals that are sandbox violations (outside the
 * workspace, a write in read-only) as opposed to plain bad input (NUL byte, bad URI).
 */
export type Resolved =
  | { ok: true; abs: string; root: string }
  | { ok: false; reason: string; violation: boolean; abs?: string }

const MAX_LINK_DEPTH = 40

/**
 * Turn the user's path string into a filesystem path: `file://` URIs are converted, NUL bytes
 * rejected. Relative paths stay relative.
 */
export function toFsPath(p: string): { ok: true; path: string } | { ok: false; reason: string } {
  if (p.includes('\0')) return { ok: false, reason: 'path contains a NUL byte' }
  if (/^file:/i.test(p)) {
    try {
      return { ok: true, path: fileURLToPath(p) }
    } catch (e) {
      return { ok: false, reason: `invalid file URI "${p}": ${errorText(e)}` }
    }
  }
  return { ok: true, path: p }
}

/** The lexical absolute form of `p` against `cwd` (no filesystem access); for permission keys. */
export function lexicalPath(cwd: string, p: string): string {
  const fs = toFsPath(p)
  return resolve(cwd, fs.ok ? fs.path : p)
}

/** True when `abs` is `root` or lies beneath it (both real, absolute paths). */
export function isInside(root: string, abs: string): boolean {
  const rel = relative(root, abs)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/** `abs` relative to `root` when inside it (`.` for the root itself), else `abs` unchanged. */
export function displayPath(root: string, abs: string): string {
  if (!isInside(root, abs)) return abs
  return relative(root, abs) || '.'
}

/**
 * The real path of `p`, which need not exist: the longest existing prefix is resolved with
 * `realpath` and the rest appended. Dangling symlinks on the way are followed by hand.
 */
export async function realpathLoose(p: string, depth = 0): Promise<string> {
  if (depth > MAX_LINK_DEPTH) throw Object.assign(new Error(`too many levels of symbolic links: ${p}`), { code: 'ELOOP' })
  try {
    return await realpath(p)
  } catch (e) {
    const code = errorCode(e)
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e
  }
  const parent = dirname(p)
  if (parent === p) return p
  const realParent = await realpathLoose(parent, depth)
  const here = join(realParent, basename(p))
  let isLink = false
  try {
    isLink = (await lstat(here)).isSymbolicLink()
  } catch {
    isLink = false
  }
  if (!isLink) return here
  const target = await readlink(here)
  return realpathLoose(resolve(realParent, target), depth + 1)
}

/**
 * Resolve `p` against `cwd` and check it against the sandbox: inside `realpath(cwd)` (unless
 * `danger-full-access`), and no writes in `read-only`.
 */
export async function resolveInWorkspace(cwd: string, p: string, opts: ResolveOptions = {}): Promise<Resolved> {
  const mode = opts.mode ?? 'workspace-write'
  const fsPath = toFsPath(p)
  if (!fsPath.ok) return { ok: false, reason: fsPath.reason, violation: false }
  let root: string
  try {
    root = await realpath(cwd)
  } catch (e) {
    return { ok: false, reason: `working directory ${cwd} is not accessible: ${errorText(e)}`, violation: false }
  }
  let abs: string
  try {
    abs = await realpathLoose(resolve(cwd, fsPath.path))
  } catch (e) {
    return { ok: false, reason: `cannot resolve "${p}": ${errorText(e)}`, violation: false }
  }
  if (opts.forWrite && mode === 'read-only') {
    return { ok: false, reason: `the read-only sandbox does not allow writing "${p}"`, violation: true, abs }
  }
  if (mode !== 'danger-full-access' && !isInside(root, abs)) {
    const via = abs === resolve(cwd, fsPath.path) ? '' : ` (resolves to ${abs})`
    return { ok: false, reason: `path "${p}"${via} is outside the workspace ${root}`, violation: true, abs }
  }
  return { ok: true, abs, root }
}

/**
 * {@link resolveInWorkspace} for a tool call: on a sandbox violation `ctx.sandboxViolation` is
 * called, and every refusal comes back as a ready-made failed `ToolOutcome`.
 */
export async function confinePath(
  tool: string,
  ctx: Pick<ToolContext, 'cwd' | 'sandbox' | 'sandboxViolation'>,
  p: string,
  opts: { forWrite?: boolean } = {},
): Promise<{ ok: true; abs: string; root: string } | { ok: false; outcome: ToolOutcome }> {
  const r = await resolveInWorkspace(ctx.cwd, p, { forWrite: opts.forWrite, mode: ctx.sandbox })
  if (r.ok) return r
  if (r.violation) {
    ctx.sandboxViolation({ tool, path: r.abs ?? p, mode: ctx.sandbox })
    return { ok: false, outcome: fail(`sandbox violation (${ctx.sandbox}): ${r.reason}`, { violation: true, path: r.abs ?? p }) }
  }
  return { ok: false, outcome: fail(r.reason) }
}

/** `confinePath` for a directory to walk: also fails clearly when it is not a directory. */
export async function confineDirectory(
  tool: string,
  ctx: Pick<ToolContext, 'cwd' | 'sandbox' | 'sandboxViolation'>,
  p: string,
  verb: string,
): Promise<{ ok: true; abs: string; root: string } | { ok: false; outcome: ToolOutcome }> {
  const where = await confinePath(tool, ctx, p)
  if (!where.ok) return where
  try {
    if (!(await stat(where.abs)).isDirectory()) return { ok: false, outcome: fail(`${displayPath(where.root, where.abs)} is not a directory`) }
  } catch (e) {
    return { ok: false, outcome: fail(`cannot ${verb} ${displayPath(where.root, where.abs)}: ${errorText(e)}`) }
  }
  return where
}
