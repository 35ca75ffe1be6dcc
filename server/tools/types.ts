/**
 * What a tool implementation receives and returns. Tool argument shapes, descriptions and
 * default permissions come from specs/tools/tools.yaml (generated `toolSpecs`); this file
 * only types the runtime side. A tool never throws: every failure is a `ToolOutcome` with
 * `ok: false` and a clear message.
 */
import type { ToolName } from '../../generated/tools/tools.gen.ts'
import type { PlanData } from '../../generated/schemas.gen.ts'
import type { LspProvider } from '../lsp/provider.ts'

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
  /**
   * Real absolute paths no tool may read or write, even when they lie inside the workspace
   * (`CHIMERA_HOME`: other sessions' logs, the permission audit log, undo snapshots). The Bash
   * sandbox never mounts them.
   */
  protectedPaths: readonly string[]
  /**
   * Real absolute paths tools may read but never create, change or delete (the project's
   * `<cwd>/.chimera` configuration: a model must not grant itself permissions).
   */
  readOnlyPaths: readonly string[]
  /**
   * The user started the server with an explicit flag to run Bash without bubblewrap in the
   * confined modes; without it, a confined mode with no bubblewrap refuses to run Bash.
   */
  allowUnconfined: boolean
  /** Extra environment variables the user configured for tool processes (already resolved). */
  toolEnv: Readonly<Record<string, string>>
  /**
   * File-change tracking for undo snapshots and `file_edit` diffs. A tool that creates, changes
   * or deletes a workspace file calls `willChange(abs)` before touching it (the core captures its
   * pre-image) and `changed(abs)` afterwards (the core records the turn's change and emits the
   * diff). Both take the real absolute path and never throw.
   */
  files: FileChangeTracker
  /**
   * The session's LSP provider (docs/lsp.md): called by an LSP tool when it runs, returns the
   * manager for this working directory or nothing (`LSP not configured`). Absent: no LSP.
   */
  lsp?: LspProvider
  /**
   * Publish the model's plan (the update_plan tool): the complete list, replacing the previous
   * one. Absent outside a session (the plan is then only the tool's output).
   */
  plan?(entries: PlanEntry[]): void
  /**
   * Point the user at a file (the open_file tool): `path` as tools display it (workspace-relative
   * inside the workspace), `line` 1-based. Absent outside a session.
   */
  fileOpen?(path: string, line?: number): void
}

/** One entry of a plan (the ACP v1 `PlanEntry`; specs/schemas/events.yaml `PlanEntry`). */
export type PlanEntry = PlanData['entries'][number]

/** See {@link Tool.preview}. */
export interface CallPreview {
  old_text: string | null
}

/** See {@link ToolContext.files}. */
export interface FileChangeTracker {
  willChange(abs: string): Promise<void>
  changed(abs: string): Promise<void>
}

/** A tracker that records nothing (tools run outside a session, tests). */
export const noFileTracking: FileChangeTracker = { willChange: async () => {}, changed: async () => {} }

export type ToolOutcome = { ok: true; output: string; data?: unknown } | { ok: false; error: string; data?: unknown }

/**
 * The contract of a tool that is not a built-in (an MCP server's, added to one session with
 * `Session.useExtraTools`). Built-ins take theirs from the generated `toolSpecs`.
 */
export interface ToolContract {
  description: string
  /** JSON Schema of the arguments, given to the provider as the tool's parameters. */
  inputSchema: Record<string, unknown>
  /** The rule when no permission rule names the tool. */
  permission: 'allow' | 'ask' | 'deny'
  /** Check raw arguments: the arguments to run with, or why they are wrong. */
  parse(args: unknown): { ok: true; args: unknown } | { ok: false; error: string }
}

export interface Tool<A = unknown> {
  name: ToolName | (string & {})
  /** Present only on extra (non built-in) tools. */
  contract?: ToolContract
  /** Run with arguments already validated against the tool's generated schema. */
  run(args: A, ctx: ToolContext): Promise<ToolOutcome>
  /**
   * The arguments that identify "the same call" for `always` / `never` permission decisions,
   * normalised (e.g. the resolved path, the trimmed command).
   */
  permissionKey(args: A, ctx: Pick<ToolContext, 'cwd'>): string
  /**
   * What the call would replace, read before it is asked for or run (for the diff a client
   * shows): `old_text` null when the file does not exist yet; undefined when not known. Has no
   * side effects (no sandbox-violation report: the call itself reports that).
   */
  preview?(args: A, ctx: ToolContext): Promise<CallPreview | undefined>
}
