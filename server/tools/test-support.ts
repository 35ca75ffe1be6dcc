/**
 * Shared fixtures for the tool tests: temporary workspaces (and a directory outside them) that
 * are removed afterwards, a recording `ToolContext`, and process helpers that find a test's
 * processes by a marker in their command line (pids inside a PID namespace mean nothing outside).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { SandboxMode, ToolContext } from './types.ts'

/** A temporary workspace and a sibling "outside" directory. */
export interface TempWorkspace {
  /** The workspace (real path). */
  cwd: string
  /** A directory outside the workspace (real path). */
  outside: string
  /** Write `files` (relative path → content) under the workspace, creating parents. */
  write(files: Record<string, string | Buffer>): void
  /** Remove both directories. */
  cleanup(): void
}

/** Create a temporary workspace; call `cleanup()` when done. */
export function tempWorkspace(): TempWorkspace {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-tools-')))
  const cwd = join(base, 'ws')
  const outside = join(base, 'outside')
  mkdirSync(cwd)
  mkdirSync(outside)
  return {
    cwd,
    outside,
    write(files) {
      for (const [rel, content] of Object.entries(files)) {
        const p = join(cwd, rel)
        mkdirSync(dirname(p), { recursive: true })
        writeFileSync(p, content)
      }
    },
    cleanup() {
      rmSync(base, { recursive: true, force: true })
    },
  }
}

/** A `ToolContext` that records what the tool reports. */
export interface RecordingContext extends ToolContext {
  progressLog: { stdout?: string; stderr?: string }[]
  violations: { tool: string; path: string; mode: SandboxMode }[]
  notices: { level: 'info' | 'warning' | 'error'; text: string }[]
  /** `will <abs>` / `changed <abs>` for every file-tracker call, in order. */
  fileEvents: string[]
  controller: AbortController
}

/** A recording context for `cwd` under `sandbox` (default `workspace-write`). */
export function recordingContext(cwd: string, sandbox: SandboxMode = 'workspace-write'): RecordingContext {
  const controller = new AbortController()
  const progressLog: RecordingContext['progressLog'] = []
  const violations: RecordingContext['violations'] = []
  const notices: RecordingContext['notices'] = []
  const fileEvents: string[] = []
  return {
    cwd,
    sandbox,
    signal: controller.signal,
    controller,
    progressLog,
    violations,
    notices,
    fileEvents,
    progress: (c) => void progressLog.push(c),
    sandboxViolation: (v) => void violations.push(v),
    notice: (level, text) => void notices.push({ level, text }),
    protectedPaths: [],
    readOnlyPaths: [],
    allowUnconfined: false,
    toolEnv: {},
    files: {
      willChange: async (abs) => void fileEvents.push(`will ${abs}`),
      changed: async (abs) => void fileEvents.push(`changed ${abs}`),
    },
  }
}

/** Pids of the live processes whose command line contains `marker` (zombies have none). */
export function processesMatching(marker: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) found.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** Wait (polling, up to `ms`) until no process matches `marker`; the pids still left, if any. */
export async function waitGone(marker: string, ms = 10_000): Promise<number[]> {
  const until = Date.now() + ms
  for (;;) {
    const left = processesMatching(marker)
    if (left.length === 0 || Date.now() > until) return left
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Wait (polling, up to `ms`) until a process matches `marker`. */
export async function waitStarted(marker: string, ms = 10_000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (processesMatching(marker).length > 0) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return false
}

/** Point `CHIMERA_BWRAP` nowhere, so Bash finds no bubblewrap; returns the function that undoes it. */
export function hideBwrap(): () => void {
  const saved = process.env.CHIMERA_BWRAP
  process.env.CHIMERA_BWRAP = '/nonexistent/bwrap'
  return () => {
    if (saved === undefined) delete process.env.CHIMERA_BWRAP
    else process.env.CHIMERA_BWRAP = saved
  }
}

/** Run `fn` (and wait for it) with no bubblewrap to be found. */
export async function withoutBwrap<T>(fn: () => Promise<T>): Promise<T> {
  const restore = hideBwrap()
  try {
    return await fn()
  } finally {
    restore()
  }
}
