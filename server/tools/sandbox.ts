/**
 * The process sandbox for the Bash tool, on bubblewrap (`bwrap`).
 *
 * Confined modes (`read-only`, `workspace-write`): a new root holding only what a shell needs —
 * `/usr`, `/bin`, `/sbin`, `/lib*` and a short list of `/etc` entries, all read-only — plus a
 * private `/dev`, `/proc`, `/tmp` and home, and the workspace (writable only in
 * `workspace-write`). Nothing else of the host exists inside: no `CHIMERA_HOME`, no real home,
 * no `/run`, `/var`, host sockets or other projects. Protected paths inside the workspace are
 * masked by an empty read-only tmpfs; read-only paths inside it are bound read-only over the
 * workspace bind. Every namespace is unshared (user where the kernel allows, then nested user
 * namespaces disabled; pid, net, ipc, uts, cgroup), all capabilities are dropped, the command
 * runs in a new session and dies with the server. See docs/decisions/0020.
 *
 * `danger-full-access`: no file-system confinement (the host root bound as is, network kept),
 * but still a PID namespace that dies with the server, so no process a command starts can
 * outlive its call.
 */
import { childProcess } from '../platform/builtins.ts'
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs'
import { lstat, mkdir } from 'node:fs/promises'
import { delimiter, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { errorCode, errorText } from './outcome.ts'
import { isInside } from './paths.ts'
import type { SandboxMode } from './types.ts'

/** Where bwrap is looked for first when `CHIMERA_BWRAP` is not set. */
export const DEFAULT_BWRAP_PATH = '/usr/bin/bwrap'

/**
 * HOME inside the confined sandbox: a private tmpfs, gone after the call. The second choice is
 * for a workspace that overlaps the first.
 */
export const SANDBOX_HOMES: readonly string[] = ['/tmp/home', '/home/sandbox']

/** The top-level system directories bound read-only (or recreated as symlinks on merged-/usr systems). */
export const SYSTEM_ROOT_ENTRIES: readonly string[] = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']

/**
 * The `/etc` entries a shell and common tools need; everything else of `/etc` (shadow, ssh host
 * keys, sudoers, npmrc, pip.conf, gitconfig, apt credentials, environment …) stays out.
 */
export const ETC_ENTRIES: readonly string[] = [
  // user and group names for id, whoami, git, ssh (no password hashes: those live in shadow)
  'passwd',
  'group',
  // name service and host names (the network is unshared, but localhost must resolve)
  'nsswitch.conf',
  'hosts',
  'host.conf',
  'resolv.conf',
  'gai.conf',
  'networks',
  'protocols',
  'services',
  // the dynamic linker
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  // Debian's alternatives (awk, editor, java …) are symlinks through here
  'alternatives',
  // public TLS roots
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
  // time zone, locale, OS identity, login shells
  'localtime',
  'timezone',
  'locale.alias',
  'locale.conf',
  'os-release',
  'lsb-release',
  'debian_version',
  'shells',
]

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false
    accessSync(p, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The bubblewrap executable to use, or `undefined` when there is none: `CHIMERA_BWRAP` when
 * set (an explicit choice: if it is not an executable file, bwrap counts as missing), else
 * `/usr/bin/bwrap` (`defaultPath`), else the first `bwrap` on `PATH`.
 */
export function findBwrap(
  env: NodeJS.ProcessEnv = process.env,
  defaultPath: string = DEFAULT_BWRAP_PATH,
): string | undefined {
  const explicit = Object.hasOwn(env, 'CHIMERA_BWRAP') ? env.CHIMERA_BWRAP : undefined
  if (explicit !== undefined && explicit !== '') return isExecutableFile(explicit) ? explicit : undefined
  if (isExecutableFile(defaultPath)) return defaultPath
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue
    const candidate = join(dir, 'bwrap')
    if (isExecutableFile(candidate)) return candidate
  }
  return undefined
}

/** True for the modes that confine processes (everything but `danger-full-access`). */
export function isConfined(mode: SandboxMode): boolean {
  return mode !== 'danger-full-access'
}

/** One host-derived piece of the sandbox root. */
export type SystemMount =
  { kind: 'ro-bind'; src: string; dest: string } | { kind: 'symlink'; target: string; dest: string }

/**
 * The system part of the confined root, read from the host (`root` is `/` except in tests):
 * each existing entry of {@link SYSTEM_ROOT_ENTRIES} and {@link ETC_ENTRIES}. A symlink whose
 * target lies under `/usr` is recreated as a symlink (it resolves inside the sandbox); one that
 * leads elsewhere (`/etc/resolv.conf` → `/run/…`) is replaced by its target, bound read-only, so
 * nothing around that target is mounted.
 */
export function systemMounts(root = '/'): SystemMount[] {
  const out: SystemMount[] = []
  const add = (rel: string): void => {
    const host = join(root, rel)
    const dest = `/${rel}`
    let st
    try {
      st = lstatSync(host)
    } catch {
      return
    }
    if (st.isSymbolicLink()) {
      let real: string
      try {
        real = realpathSync(host)
      } catch {
        return
      }
      if (isInside(join(root, 'usr'), real)) return void out.push({ kind: 'symlink', target: readlinkSync(host), dest })
      try {
        const target = statSync(real)
        if (target.isFile() || target.isDirectory()) out.push({ kind: 'ro-bind', src: real, dest })
      } catch {
        // gone meanwhile
      }
      return
    }
    if (st.isDirectory() || st.isFile()) out.push({ kind: 'ro-bind', src: host, dest })
  }
  for (const e of SYSTEM_ROOT_ENTRIES) add(e)
  for (const e of ETC_ENTRIES) add(`etc/${e}`)
  return out
}

let cachedSystem: SystemMount[] | undefined
/** {@link systemMounts} of `/`, read once. */
export function hostSystemMounts(): SystemMount[] {
  cachedSystem ??= systemMounts('/')
  return cachedSystem
}

/** What the installed bubblewrap can do here. */
export interface BwrapFeatures {
  /** A user namespace can be created (and nested ones disabled inside it). */
  userns: boolean
}

/** A path to keep out of sight or read-only inside the sandbox, with what it is on the host. */
export interface SandboxPath {
  path: string
  kind: 'directory' | 'other'
}

/** Everything {@link bwrapArgs} needs; all paths real and absolute. */
export interface SandboxPlan {
  mode: SandboxMode
  cwd: string
  system: readonly SystemMount[]
  features: BwrapFeatures
  /** Protected paths inside the bound trees: each is masked. */
  masks: readonly SandboxPath[]
  /** Read-only paths inside a writable workspace: each is bound read-only over it. */
  readOnly: readonly SandboxPath[]
  /** HOME inside the sandbox (default the first of {@link SANDBOX_HOMES}). */
  home?: string
}

/**
 * The bwrap options (before `--` and the command) for a plan. Confined modes build a new root
 * (see the file header); `danger-full-access` binds the host root as it is and only adds the
 * PID namespace.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const { mode, cwd } = plan
  const common = ['--new-session', '--die-with-parent']
  if (!isConfined(mode)) {
    return [
      '--bind',
      '/',
      '/',
      '--dev-bind',
      '/dev',
      '/dev',
      '--proc',
      '/proc',
      '--unshare-pid',
      ...common,
      '--chdir',
      cwd,
    ]
  }
  const home = plan.home ?? SANDBOX_HOMES[0] ?? '/tmp/home'
  const args = ['--unshare-all']
  if (plan.features.userns) args.push('--unshare-user', '--disable-userns')
  args.push('--cap-drop', 'ALL', ...common)
  for (const m of plan.system) {
    if (m.kind === 'symlink') args.push('--symlink', m.target, m.dest)
    else args.push('--ro-bind', m.src, m.dest)
  }
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', home)
  args.push(mode === 'workspace-write' ? '--bind' : '--ro-bind', cwd, cwd)
  const rules = [
    ...plan.readOnly.map((p) => ({ ...p, op: 'ro' as const })),
    ...plan.masks.map((p) => ({ ...p, op: 'mask' as const })),
  ]
  // In a writable workspace, each directory between it and a masked or read-only path is bound
  // over itself first: a mount point cannot be renamed or removed (EBUSY), so a command cannot
  // move the rule's path away with its parent (its mount would go along, out from under the name
  // the file tools check). Not one inside (or at) a rule's path: a read-only bind already stops a
  // rename there, and a writable bind inside it would open what it keeps read-only.
  const pins =
    mode === 'workspace-write'
      ? [...new Set(rules.flatMap((r) => between(cwd, r.path)))]
          .filter((d) => !rules.some((r) => isInside(r.path, d)))
          .map((path) => ({ path, kind: 'directory' as const, op: 'pin' as const }))
      : []
  const layered = [...pins, ...rules].sort((a, b) => a.path.length - b.path.length)
  for (const p of layered) {
    if (p.op === 'pin') args.push('--bind', p.path, p.path)
    else if (p.op === 'ro') args.push('--ro-bind', p.path, p.path)
    else if (p.kind === 'directory') args.push('--tmpfs', p.path, '--remount-ro', p.path)
    else args.push('--ro-bind', '/dev/null', p.path)
  }
  args.push('--remount-ro', '/', '--chdir', cwd)
  return args
}

/** The directories strictly between `root` and `p` (none when `p` is not inside `root`). */
function between(root: string, p: string): string[] {
  const out: string[] = []
  if (p === root || !isInside(root, p)) return out
  for (let d = dirname(p); d !== root && isInside(root, d); d = dirname(d)) out.push(d)
  return out
}

const probes = new Map<string, Promise<BwrapFeatures | { error: string }>>()

function runBwrap(bwrap: string, args: string[]): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    childProcess().execFile(bwrap, args, { timeout: 10_000, env: { PATH: '/usr/bin:/bin' } }, (err, _stdout, stderr) =>
      resolve({ ok: !err, stderr: String(stderr).trim() || (err ? errorText(err) : '') }),
    )
  })
}

/**
 * Find out once per executable whether bwrap can build the confined sandbox here, and whether
 * with a user namespace. `{ error }` when it cannot sandbox at all (bwrap's own message).
 */
export function probeBwrap(bwrap: string): Promise<BwrapFeatures | { error: string }> {
  let p = probes.get(bwrap)
  if (!p) {
    p = (async () => {
      const system = hostSystemMounts()
      const trial = (features: BwrapFeatures): string[] => [
        ...bwrapArgs({ mode: 'read-only', cwd: '/tmp', system, features, masks: [], readOnly: [] }),
        '--',
        'true',
      ]
      if ((await runBwrap(bwrap, trial({ userns: true }))).ok) return { userns: true }
      const plain = await runBwrap(bwrap, trial({ userns: false }))
      if (plain.ok) return { userns: false }
      return { error: plain.stderr || 'bwrap failed' }
    })()
    probes.set(bwrap, p)
  }
  return p
}

/** What the sandbox needs to know about the session's special paths. */
export interface PathRules {
  protectedPaths: readonly string[]
  readOnlyPaths: readonly string[]
}

/** Every root the confined sandbox binds from the host. */
function boundRoots(cwd: string, system: readonly SystemMount[]): string[] {
  return [cwd, ...system.flatMap((m) => (m.kind === 'ro-bind' ? [m.src] : []))]
}

async function kindOf(p: string): Promise<'directory' | 'other' | 'symlink' | 'missing'> {
  try {
    const st = await lstat(p)
    if (st.isSymbolicLink()) return 'symlink'
    return st.isDirectory() ? 'directory' : 'other'
  } catch (e) {
    if (errorCode(e) === 'ENOENT' || errorCode(e) === 'ENOTDIR') return 'missing'
    throw e
  }
}

/**
 * The first directory strictly between `cwd` and `p` (inside it) that is a symbolic link, if any.
 * A command can re-point such a link (it lies in the writable workspace): the mount made through it
 * would then hide the old target while the file tools, which resolve the rule path on each call,
 * protect the new one, and the old target would be open to them by its own name.
 */
async function linkOnTheWay(cwd: string, p: string): Promise<string | undefined> {
  const parts = relative(cwd, p).split(sep).slice(0, -1)
  let at = cwd
  for (const part of parts) {
    at = join(at, part)
    const kind = await kindOf(at)
    if (kind === 'symlink') return at
    if (kind !== 'directory') return undefined
  }
  return undefined
}

/**
 * Why a rule path inside the workspace cannot carry its mount: it is reached through a link there
 * (in a writable workspace a command could re-point it; bwrap cannot mount through an absolute one
 * in either mode).
 */
async function linkedRulePath(cwd: string, p: string, what: string): Promise<string | undefined> {
  if (!isInside(cwd, p) || p === cwd) return undefined
  const link = await linkOnTheWay(cwd, p)
  return link === undefined
    ? undefined
    : `the ${what} ${p} goes through the symbolic link ${link}, which a command could re-point; give the path without the link (for CHIMERA_HOME or CHIMERA_SNAPSHOT_ROOT, its real path, then restart)`
}

/**
 * The masks and read-only binds for `cwd` under `mode`, or the reason Bash must not run. A
 * protected or read-only path that does not exist yet inside a writable workspace is created
 * as an empty directory first, so it can carry its mount and the command cannot create it; it
 * is left in place afterwards (removing it could unmount it under a concurrent call).
 */
export async function planPaths(
  mode: SandboxMode,
  cwd: string,
  rules: PathRules,
  system: readonly SystemMount[],
): Promise<{ ok: true; masks: SandboxPath[]; readOnly: SandboxPath[] } | { ok: false; reason: string }> {
  const masks: SandboxPath[] = []
  const readOnly: SandboxPath[] = []
  const writable = mode === 'workspace-write'
  const roots = boundRoots(cwd, system)
  for (const named of rules.protectedPaths) {
    // Normalised as the file tools' rule lists are (realPathList): no trailing slash, which would
    // make lstat follow a link, and `..` taken by its text, as the tools take it.
    const p = resolve(named)
    if (isInside(p, cwd))
      return { ok: false, reason: `the working directory ${cwd} lies inside the protected path ${p}` }
    if (!roots.some((r) => isInside(r, p))) continue
    const linked = await linkedRulePath(cwd, p, 'protected path')
    if (linked) return { ok: false, reason: linked }
    let kind = await kindOf(p)
    if (kind === 'missing') {
      if (!writable || !isInside(cwd, p)) continue
      await mkdir(p, { recursive: true, mode: 0o700 })
      kind = 'directory'
    }
    if (kind === 'symlink')
      return { ok: false, reason: `the protected path ${p} is a symbolic link and cannot be masked` }
    masks.push({ path: p, kind })
  }
  // A protected path inside another (CHIMERA_HOME/snapshots inside CHIMERA_HOME) is hidden by the
  // outer mask already; masking it too would make bwrap create its mount point inside the outer
  // mask's read-only tmpfs, which fails every call ("Can't mkdir …: Read-only file system").
  const outer = masks.filter(
    (m, i) => !masks.some((o, j) => o.kind === 'directory' && (o.path === m.path ? j < i : isInside(o.path, m.path))),
  )
  masks.splice(0, masks.length, ...outer)
  if (writable) {
    for (const named of rules.readOnlyPaths) {
      const p = resolve(named)
      if (!isInside(cwd, p) || p === cwd) {
        if (p === cwd) return { ok: false, reason: `the working directory ${cwd} is a read-only path` }
        continue
      }
      if (rules.protectedPaths.some((q) => isInside(resolve(q), p))) continue
      const linked = await linkedRulePath(cwd, p, 'read-only path')
      if (linked) return { ok: false, reason: linked }
      let kind = await kindOf(p)
      if (kind === 'missing') {
        await mkdir(p, { recursive: true, mode: 0o755 })
        kind = 'directory'
      }
      if (kind === 'symlink')
        return { ok: false, reason: `the read-only path ${p} is a symbolic link and cannot be kept read-only` }
      readOnly.push({ path: p, kind })
    }
  }
  return { ok: true, masks, readOnly }
}

/** How to spawn a shell command under a sandbox mode. */
export type SandboxedCommand =
  | {
      ok: true
      file: string
      args: string[]
      /** True when the command runs inside bwrap. */
      sandboxed: boolean
      /** True when a confined mode runs without bwrap (the user allowed it). */
      unconfined: boolean
      /** HOME for the command. */
      home: string
    }
  | { ok: false; error: string }

/** What {@link sandboxedCommand} needs besides the mode, cwd and command. */
export interface SandboxOptions extends PathRules {
  allowUnconfined: boolean
  env?: NodeJS.ProcessEnv
  /** The real home, used as HOME outside the confined sandbox. */
  realHome: string
}

/** The error when a confined mode has no bubblewrap and the user did not allow running unconfined. */
export function missingBwrapError(mode: SandboxMode): string {
  return `Bash cannot run in the ${mode} sandbox: bubblewrap (bwrap) is not installed. Install the "bubblewrap" package (e.g. apt-get install bubblewrap), or start the server with --allow-unconfined to run Bash without confinement.`
}

/** The warning sent to every client when Bash runs without its sandbox. */
export function unconfinedNotice(mode: SandboxMode): string {
  return `bubblewrap (bwrap) is not installed and --allow-unconfined was given: Bash runs UNCONFINED, without the ${mode} sandbox`
}

/**
 * The executable and arguments that run `bash -c command` in `cwd` (real, absolute) under
 * `mode`. Confined modes without a usable bwrap fail closed unless `allowUnconfined`.
 */
export async function sandboxedCommand(
  mode: SandboxMode,
  cwd: string,
  command: string,
  opts: SandboxOptions,
): Promise<SandboxedCommand> {
  const shell = ['bash', '-c', command]
  const bwrap = findBwrap(opts.env ?? process.env)
  const confined = isConfined(mode)
  const unconfined = (): SandboxedCommand => ({
    ok: true,
    file: 'bash',
    args: shell.slice(1),
    sandboxed: false,
    unconfined: confined,
    home: opts.realHome,
  })
  if (!bwrap) return confined && !opts.allowUnconfined ? { ok: false, error: missingBwrapError(mode) } : unconfined()
  const features = await probeBwrap(bwrap)
  if ('error' in features) {
    if (confined && !opts.allowUnconfined)
      return {
        ok: false,
        error: `Bash cannot run in the ${mode} sandbox: bubblewrap (${bwrap}) cannot create a sandbox here: ${features.error}`,
      }
    return unconfined()
  }
  if (!confined) {
    const args = [...bwrapArgs({ mode, cwd, system: [], features, masks: [], readOnly: [] }), '--', ...shell]
    return { ok: true, file: bwrap, args, sandboxed: true, unconfined: false, home: opts.realHome }
  }
  if (cwd === sep)
    return {
      ok: false,
      error: `Bash cannot run in the ${mode} sandbox with / as working directory: choose a project directory`,
    }
  const system = hostSystemMounts()
  let paths: Awaited<ReturnType<typeof planPaths>>
  try {
    paths = await planPaths(mode, cwd, opts, system)
  } catch (e) {
    return { ok: false, error: `Bash cannot prepare the ${mode} sandbox: ${errorText(e)}` }
  }
  if (!paths.ok) return { ok: false, error: `Bash cannot run in the ${mode} sandbox: ${paths.reason}` }
  const home = sandboxHome(cwd)
  const args = [
    ...bwrapArgs({ mode, cwd, system, features, masks: paths.masks, readOnly: paths.readOnly, home }),
    '--',
    ...shell,
  ]
  return { ok: true, file: bwrap, args, sandboxed: true, unconfined: false, home }
}

/** The sandbox HOME for a workspace: the first of {@link SANDBOX_HOMES} that does not overlap it. */
export function sandboxHome(cwd: string): string {
  return SANDBOX_HOMES.find((h) => !isInside(h, cwd) && !isInside(cwd, h)) ?? '/.chimera-home'
}

/** The one start-up line about the sandbox, for stderr. */
export interface SandboxStatus {
  level: 'info' | 'warning'
  text: string
  /** The bwrap executable in use, if any. */
  bwrap?: string
  /** True when Bash runs inside bwrap in this mode. */
  confined: boolean
}

/**
 * The sandbox as it will be for `mode` (for the CLI's start-up line): whether Bash is confined,
 * refused, or runs unconfined because the user allowed it.
 */
export function sandboxStatus(
  mode: SandboxMode,
  allowUnconfined: boolean,
  env: NodeJS.ProcessEnv = process.env,
): SandboxStatus {
  const bwrap = findBwrap(env)
  if (!isConfined(mode)) {
    if (bwrap)
      return {
        level: 'warning',
        bwrap,
        confined: false,
        text: `sandbox: danger-full-access — no file-system or network confinement; Bash processes run in a PID namespace (${bwrap}) so none outlives its call`,
      }
    return {
      level: 'warning',
      confined: false,
      text: 'sandbox: danger-full-access — no confinement; bubblewrap is not installed, so a background process that leaves its process group can outlive its call',
    }
  }
  if (bwrap) {
    const writes = mode === 'read-only' ? 'nothing writable but a private /tmp' : 'only the workspace writable'
    return {
      level: 'info',
      bwrap,
      confined: true,
      text: `sandbox: ${mode} — Bash runs in bubblewrap (${bwrap}): no network, no capabilities, ${writes}`,
    }
  }
  if (allowUnconfined)
    return {
      level: 'warning',
      confined: false,
      text: `sandbox: ${mode} — WARNING: bubblewrap is not installed and --allow-unconfined was given: Bash runs UNCONFINED`,
    }
  return {
    level: 'warning',
    confined: false,
    text: `sandbox: ${mode} — bubblewrap is not installed: Bash is refused (install the "bubblewrap" package, or start with --allow-unconfined)`,
  }
}
