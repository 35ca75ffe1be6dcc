/**
 * Ports: how tools reach files and processes. Each has a local implementation (this process's
 * disk and process groups: bash.ts `localProcesses`, and the verified local open every file tool
 * reads through) and an editor-backed one (an ACP client's `fs/*` and `terminal/*`:
 * server/acp/v1/editor-ports.ts). Tools built over a port (bash.ts `bashVia`,
 * file-tools-via.ts) keep the built-ins' names, arguments, outputs and confinement.
 */
import type { RunResult } from './run-in-group.ts'
import type { ToolContext } from './types.ts'

/** Another view of the workspace's files (an editor's buffers): whole-text reads and writes of a confined path. */
export interface FilePort {
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
