/**
 * Workspace confinement for the file tools. A path (relative, absolute or `file://`) is resolved
 * to its real path — symlinks followed, `..` collapsed — and must land inside the real path of
 * the working directory unless the sandbox is `danger-full-access`. In `read-only` no write is
 * allowed anywhere. Files that do not exist yet are resolved through their nearest existing
 * ancestor, following dangling symlinks too, so a link to a not-yet-existing file outside the
 * workspace cannot be used to create it. In every mode, protected paths (`CHIMERA_HOME`) are
 * neither read nor written, and read-only paths (`<cwd>/.chimera`) are not written.
 *
 * This check names the file; safe-open.ts then opens exactly that file, so a path changed
 * between the check and the open cannot lead elsewhere.
 */
import type { Dirent } from 'node:fs'
import { lstat, readlink, realpath } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isInside } from '../platform/path-inside.ts'
import { errorCode, errorText, fail } from './outcome.ts'
import type { SandboxMode, ToolContext, ToolOutcome } from './types.ts'
import { listByName } from './walk.ts'

export { isInside }

/** Options of {@link resolveInWorkspace}. */
export interface ResolveOptions {
  /** The tool will create or modify the path (refused in `read-only`). */
  forWrite?: boolean
  /** The sandbox mode; default `workspace-write`. */
  mode?: SandboxMode
  /** Real absolute paths never read or written (see `ToolContext.protectedPaths`). */
  protectedPaths?: readonly string[]
  /** Real absolute paths never written (see `ToolContext.readOnlyPaths`). */
  readOnlyPaths?: readonly string[]
}

/**
 * The result of resolving a path: the real absolute path and the real workspace root, or the
 * reason it was refused. `violation` marks refusals that are sandbox violations (outside the
 * workspace, a write in read-only) as opposed to plain bad input (NUL byte, bad URI).
 */
export type Resolved =
  | {
      ok: true
      abs: string
      root: string
      /** The protected paths as checked (through {@link realPathList}): a walk skips them too. */
      protectedPaths: string[]
    }
  | { ok: false; reason: string; violation: boolean; abs?: string }

const MAX_LINK_DEPTH = 40

/**
 * How long the real path of a working directory or of a rule list's path is reused: a burst of
 * tool calls (a thousand `Glob` lines in one prompt) resolves each once instead of once per call,
 * each resolution being one to four calls into libuv's pool (two more when the path does not exist
 * yet, as the snapshot store's often does). Only a path that is its own real path is reused (no
 * symbolic link on the way): a directory reached through a link is resolved on every call, so a
 * link re-pointed elsewhere cannot leave its old target open. The path a tool names is never
 * reused either. Why a reused path cannot widen what a tool reaches:
 * docs/decisions/0502-real-paths-reused-briefly.md.
 */
export const REAL_PATH_REUSE_MS = 1000
/** Entries kept at most; the memo starts over past it (a process has few working directories). */
const REAL_PATH_MEMO_MAX = 256
const realPathMemo = new Map<string, { until: number; real: Promise<string> }>()
/** The clock at the last lookup: one that went back (a test's fake clock) starts the memo over. */
let realPathClock = 0

/**
 * `resolveIt(abs)`, or its answer of less than {@link REAL_PATH_REUSE_MS} ago when that answer was
 * `abs` itself. A failure is not reused: the next call tries again.
 */
function reused(kind: 'strict' | 'loose', abs: string, resolveIt: (p: string) => Promise<string>): Promise<string> {
  const key = `${kind}\0${abs}`
  // hrtime: monotonic, and it loads no module (the global `performance` loads perf_hooks).
  const now = Number(process.hrtime.bigint()) / 1e6
  if (now < realPathClock) realPathMemo.clear()
  realPathClock = now
  const hit = realPathMemo.get(key)
  if (hit !== undefined && hit.until > now) return hit.real
  if (realPathMemo.size >= REAL_PATH_MEMO_MAX) realPathMemo.clear()
  const real = resolveIt(abs)
  realPathMemo.set(key, { until: now + REAL_PATH_REUSE_MS, real })
  const forget = (): void => {
    if (realPathMemo.get(key)?.real === real) realPathMemo.delete(key)
  }
  real.then((r) => {
    if (r !== abs) forget()
  }, forget)
  return real
}

/** Tests: forget every reused real path. */
export function forgetRealPaths(): void {
  realPathMemo.clear()
}

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
  if (depth > MAX_LINK_DEPTH)
    throw Object.assign(new Error(`too many levels of symbolic links: ${p}`), { code: 'ELOOP' })
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
 * Each path as given (made absolute and normalised) and its real path, without duplicates: a
 * rule about a path must hold whichever name reaches it. A path that was its own real path may
 * be taken as such for up to {@link REAL_PATH_REUSE_MS}.
 */
export async function realPathList(paths: readonly string[]): Promise<string[]> {
  const given = paths.filter((p) => typeof p === 'string' && p !== '' && !p.includes('\0')).map((p) => resolve(p))
  // Resolved side by side; a loop or an unreadable ancestor leaves the path as given.
  const real = await Promise.all(
    given.map((abs) => reused('loose', abs, (p) => realpathLoose(p)).catch(() => undefined)),
  )
  const out = new Set<string>()
  given.forEach((abs, i) => {
    out.add(abs)
    if (real[i] !== undefined) out.add(real[i])
  })
  return [...out]
}

/** The first of `list` that is `abs` or one of its ancestors. */
export function coveringPath(list: readonly string[], abs: string): string | undefined {
  return list.find((p) => isInside(p, abs))
}

/**
 * Why `abs` (a real path) may not be touched, or undefined: inside a protected path (never, in
 * any mode), or inside a read-only path for a write. `protectedPaths` and `readOnlyPaths` come
 * through {@link realPathList}.
 */
export function pathRuleViolation(
  abs: string,
  rules: { protectedPaths: readonly string[]; readOnlyPaths: readonly string[] },
  forWrite: boolean,
): string | undefined {
  const prot = coveringPath(rules.protectedPaths, abs)
  if (prot !== undefined) return `"${abs}" lies in the protected path ${prot}, which no tool may read or write`
  if (forWrite) {
    const ro = coveringPath(rules.readOnlyPaths, abs)
    if (ro !== undefined) return `"${abs}" lies in the read-only path ${ro}, which no tool may change`
  }
  return undefined
}

/**
 * Resolve `p` against `cwd` and check it against the sandbox: inside `realpath(cwd)` (unless
 * `danger-full-access`), no writes in `read-only`, never a protected path, no writes to a
 * read-only path.
 */
export async function resolveInWorkspace(cwd: string, p: string, opts: ResolveOptions = {}): Promise<Resolved> {
  const mode = opts.mode ?? 'workspace-write'
  const fsPath = toFsPath(p)
  if (!fsPath.ok) return { ok: false, reason: fsPath.reason, violation: false }
  // The working directory, the path and the rule lists resolve side by side (one round of calls):
  // each once (the path is often the working directory itself), and the read-only list only for
  // a write, the one case it decides.
  const target = resolve(cwd, fsPath.path)
  const rootP = settle(reused('strict', resolve(cwd), realpath))
  const [rootR, absR, protectedPaths, readOnlyPaths] = await Promise.all([
    rootP,
    target === resolve(cwd) ? rootP : settle(realpathLoose(target)),
    realPathList(opts.protectedPaths ?? []),
    opts.forWrite ? realPathList(opts.readOnlyPaths ?? []) : [],
  ])
  if (!rootR.ok)
    return {
      ok: false,
      reason: `working directory ${cwd} is not accessible: ${errorText(rootR.error)}`,
      violation: false,
    }
  if (!absR.ok) return { ok: false, reason: `cannot resolve "${p}": ${errorText(absR.error)}`, violation: false }
  const root = rootR.value
  const abs = absR.value
  if (opts.forWrite && mode === 'read-only') {
    return { ok: false, reason: `the read-only sandbox does not allow writing "${p}"`, violation: true, abs }
  }
  if (mode !== 'danger-full-access' && !isInside(root, abs)) {
    const via = abs === target ? '' : ` (resolves to ${abs})`
    return { ok: false, reason: `path "${p}"${via} is outside the workspace ${root}`, violation: true, abs }
  }
  const broken = pathRuleViolation(abs, { protectedPaths, readOnlyPaths }, opts.forWrite ?? false)
  if (broken !== undefined) return { ok: false, reason: broken, violation: true, abs }
  return { ok: true, abs, root, protectedPaths }
}

/** A promise's value or its error, without throwing. */
function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  )
}

/**
 * {@link resolveInWorkspace} for a tool call: on a sandbox violation `ctx.sandboxViolation` is
 * called, and every refusal comes back as a ready-made failed `ToolOutcome`.
 */
export async function confinePath(
  tool: string,
  ctx: ConfineContext,
  p: string,
  opts: { forWrite?: boolean } = {},
): Promise<{ ok: true; abs: string; root: string; protectedPaths: string[] } | { ok: false; outcome: ToolOutcome }> {
  const r = await resolveInWorkspace(ctx.cwd, p, {
    forWrite: opts.forWrite,
    mode: ctx.sandbox,
    protectedPaths: ctx.protectedPaths,
    ...(opts.forWrite ? { readOnlyPaths: ctx.readOnlyPaths } : {}),
  })
  if (r.ok) return r
  if (r.violation) return { ok: false, outcome: violation(tool, ctx, r.abs ?? p, r.reason) }
  return { ok: false, outcome: fail(r.reason) }
}

/** What confinement reads from the tool context. */
export type ConfineContext = Pick<
  ToolContext,
  'cwd' | 'sandbox' | 'sandboxViolation' | 'protectedPaths' | 'readOnlyPaths'
>

/** Report a sandbox violation to the context and build its tool error. */
export function violation(
  tool: string,
  ctx: Pick<ToolContext, 'sandbox' | 'sandboxViolation'>,
  path: string,
  reason: string,
): ToolOutcome {
  ctx.sandboxViolation({ tool, path, mode: ctx.sandbox })
  return fail(`sandbox violation (${ctx.sandbox}): ${reason}`, { violation: true, path })
}

/**
 * `confinePath` for a directory to walk: also fails clearly when it is not a directory, and lists
 * it (by name), so that the walk starts from this listing: one call into the pool where a `stat`
 * and the walk's own listing were two.
 */
export async function confineDirectory(
  tool: string,
  ctx: ConfineContext,
  p: string,
  verb: string,
): Promise<
  | { ok: true; abs: string; root: string; protectedPaths: string[]; listing: Dirent[] }
  | { ok: false; outcome: ToolOutcome }
> {
  const where = await confinePath(tool, ctx, p)
  if (!where.ok) return where
  let listing: Dirent[]
  try {
    listing = await listByName(where.abs)
  } catch (e) {
    if (errorCode(e) === 'ENOTDIR')
      return { ok: false, outcome: fail(`${displayPath(where.root, where.abs)} is not a directory`) }
    return { ok: false, outcome: fail(`cannot ${verb} ${displayPath(where.root, where.abs)}: ${errorText(e)}`) }
  }
  return { ...where, listing }
}
