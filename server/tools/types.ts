/**
 * What a tool implementation receives and returns. Tool argument shapes, descriptions and
 * default permissions come from specs/tools/tools.yaml (generated `toolSpecs`); this file
 * only types the runtime side. A tool never throws: every failure is a `ToolOutcome` with
 * `ok: false` and a clear message.
 */
import type { ToolName } from '../../generated/tools/tools.gen.ts'

export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access'

export interface ToolContext {
  /** The session's working directory (absolute); file tools are confined to it. */
  cwd: string
  sandbox: SandboxMode
  /** Aborted when the turn is cancelled: stop work, kill processes. */
  signal: AbortSignal
  /** Stream partial output (Bash stdout/stderr). */
  progress(chunk: { stdout?: string; stderr?: string }): void
  /** Report an attempt to leave the sandbox (also returned as a tool error). */
  sandboxViolation(v: { tool: string; path: string; mode: SandboxMode }): void
  /** A one-line notice for the user (e.g. "bubblewrap is not installed: Bash runs unconfined"). */
  notice(level: 'info' | 'warning' | 'error', text: string): void
}

export type ToolOutcome =
  | { ok: true; output: string; data?: unknown }
  | { ok: false; error: string; data?: unknown }

export interface Tool<A = any> {
  name: ToolName | (string & {})
  /** Run with arguments already validated against the tool's generated schema. */
  run(args: A, ctx: ToolContext): Promise<ToolOutcome>
  /**
   * The arguments that identify "the same call" for `always` / `never` permission decisions,
   * normalised (e.g. the resolved path, the trimmed command).
   */
  permissionKey(args: A, ctx: Pick<ToolContext, 'cwd'>): string
}
