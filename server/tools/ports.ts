/**
 * Ports: how tools reach files and processes. Each has a local implementation (this process's
 * disk and process groups: local-files.ts `localFiles`, the verified opens of
 * docs/decisions/0022-verified-opens.md; bash.ts `localProcesses`) and an editor-backed one (an
 * ACP client's `fs/*` and `terminal/*`: server/acp/v1/editor-ports.ts, its files pinned by
 * pinned-files.ts). There is one Read, Write, Edit and Bash, each built over a port (`readVia`,
 * `writeVia`, `editVia`, `bashVia`); the built-ins are those over the local ports.
 */
import type { RunResult } from './run-in-group.ts'
import type { ToolContext, ToolOutcome } from './types.ts'

/** A path the calling tool has confined (paths.ts `confinePath`): `abs` under workspace `root`, shown as `name`. */
export interface FileTarget {
  /** The tool that asks (its name in sandbox violations). */
  tool: string
  abs: string
  root: string
  name: string
}

/** A failed file operation: the tool's outcome as it stands. */
export type FileFailure = { ok: false; outcome: ToolOutcome }

/** What an update does with the file's text: the new text and the result once written, or an outcome to stop with. */
export type TextChange = (
  text: string,
) => ToolOutcome | { updated: string; result: (extra?: Record<string, unknown>) => ToolOutcome }

/** The workspace's files as a tool reaches them: whole texts of confined paths. */
export interface FilePort {
  /** The text of the file; `extra` joins the result's data, `note` (when given) its output. */
  read(
    file: FileTarget,
    ctx: ToolContext,
  ): Promise<{ ok: true; text: string; extra: Record<string, unknown>; note?: string } | FileFailure>
  /**
   * Replace the file's text, creating it (and missing directories) when absent; `ctx.files`
   * hears of the change before and after. `created` when it did not exist; `extra` joins the
   * result's data.
   */
  write(
    file: FileTarget,
    content: string,
    ctx: ToolContext,
  ): Promise<{ ok: true; created?: boolean; extra: Record<string, unknown> } | FileFailure>
  /** Read an existing file, `change` its text and write it back as one step (`ctx.files` hears of the write). */
  update(file: FileTarget, ctx: ToolContext, change: TextChange): Promise<ToolOutcome>
}

/** Another view of the files (an editor's buffers): whole-text reads and writes, unverified. */
export interface TextView {
  /** The text of `abs` (a confined, absolute path) as this view has it. */
  readText(abs: string, signal: AbortSignal): Promise<{ ok: true; text: string } | { ok: false; error: string }>
  /** Replace the text of `abs`; an error text when it failed. */
  writeText(abs: string, content: string, signal: AbortSignal): Promise<string | undefined>
}

/** How a shell command ended, or why it did not run. */
export type ShellResult = { ok: true; result: RunResult; sandboxed: boolean } | { ok: false; error: string }

/** Where a shell command runs: `bash -c command` in the working directory, output streamed as progress. */
export interface ProcessPort {
  /** Run it until it exits, times out (`timeoutMs`) or the call is cancelled (`ctx.signal`). Never rejects. */
  run(command: string, timeoutMs: number, ctx: ToolContext): Promise<ShellResult>
}

/**
 * `port` for commands under `danger-full-access` only; in the confined modes they run through
 * `local` (bubblewrap, which cannot reach into an editor's terminal: docs/decisions/0070).
 */
export function unconfinedOnly(port: ProcessPort, local: ProcessPort): ProcessPort {
  return {
    run: (command, timeoutMs, ctx) =>
      (ctx.sandbox === 'danger-full-access' ? port : local).run(command, timeoutMs, ctx),
  }
}
