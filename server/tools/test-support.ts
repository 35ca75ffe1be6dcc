/**
 * Shared fixtures for the tool tests: temporary workspaces (and a directory outside them) that
 * are removed afterwards, and a recording `ToolContext`.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { noFileTracking, type SandboxMode, type ToolContext } from './types.ts'

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
  controller: AbortController
}

/** A recording context for `cwd` under `sandbox` (default `workspace-write`). */
export function recordingContext(cwd: string, sandbox: SandboxMode = 'workspace-write'): RecordingContext {
  const controller = new AbortController()
  const progressLog: RecordingContext['progressLog'] = []
  const violations: RecordingContext['violations'] = []
  const notices: RecordingContext['notices'] = []
  return {
    cwd,
    sandbox,
    signal: controller.signal,
    controller,
    progressLog,
    violations,
    notices,
    progress: (c) => void progressLog.push(c),
    sandboxViolation: (v) => void violations.push(v),
    notice: (level, text) => void notices.push({ level, text }),
    protectedPaths: [],
    readOnlyPaths: [],
    allowUnconfined: false,
    toolEnv: {},
    files: noFileTracking,
  }
}
