/**
 * The process sandbox for the Bash tool: bubblewrap (`bwrap`) in the `read-only` and
 * `workspace-write` modes. The whole filesystem is mounted read-only, with fresh /dev, /proc
 * and /tmp; the working directory is bind-mounted writable only in `workspace-write`; the
 * network and PID namespaces are unshared. `danger-full-access` runs the command directly.
 */
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'
import type { SandboxMode } from './types.ts'

/** Where bwrap is looked for first when `CHIMERA_BWRAP` is not set. */
export const DEFAULT_BWRAP_PATH = '/usr/bin/bwrap'

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
export function findBwrap(env: NodeJS.ProcessEnv = process.env, defaultPath: string = DEFAULT_BWRAP_PATH): string | undefined {
  const explicit = env.CHIMERA_BWRAP
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

/**
 * The bwrap options (before the command) for `mode` with the working directory `cwd` (a real,
 * absolute path). The cwd is mounted after the /tmp tmpfs so a workspace under /tmp stays
 * visible: writable in `workspace-write`, read-only in `read-only`. Empty for
 * `danger-full-access`, which is not sandboxed.
 */
export function bwrapArgs(mode: SandboxMode, cwd: string): string[] {
  if (!isConfined(mode)) return []
  return [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    mode === 'workspace-write' ? '--bind' : '--ro-bind', cwd, cwd,
    '--unshare-net',
    '--unshare-pid',
    '--die-with-parent',
    '--chdir', cwd,
  ]
}

/** How to spawn a shell command under a sandbox mode. */
export interface SandboxedCommand {
  file: string
  args: string[]
  /** True when the command runs inside bwrap. */
  sandboxed: boolean
  /** Set when the mode asks for confinement but no bwrap was found: runs unconfined. */
  missingBwrap: boolean
}

/**
 * The executable and arguments that run `bash -c command` in `cwd` under `mode`: wrapped in
 * bwrap in the confined modes when it is available, plain `bash -c` otherwise.
 */
export function sandboxedCommand(mode: SandboxMode, cwd: string, command: string, env: NodeJS.ProcessEnv = process.env): SandboxedCommand {
  const shell = ['bash', '-c', command]
  if (!isConfined(mode)) return { file: 'bash', args: shell.slice(1), sandboxed: false, missingBwrap: false }
  const bwrap = findBwrap(env)
  if (!bwrap) return { file: 'bash', args: shell.slice(1), sandboxed: false, missingBwrap: true }
  return { file: bwrap, args: [...bwrapArgs(mode, cwd), '--', ...shell], sandboxed: true, missingBwrap: false }
}

/** The warning shown when a confined mode has to run without bwrap. */
export function missingBwrapNotice(mode: SandboxMode): string {
  return `bubblewrap (bwrap) is not installed: Bash runs without the ${mode} sandbox`
}
