/**
 * The Bash tool: `bash -c command` in the working directory, in its own process group, inside
 * bubblewrap (sandbox.ts): confined in `read-only` and `workspace-write`, a PID namespace only
 * in `danger-full-access`. Without bubblewrap the confined modes refuse to run unless the user
 * allowed running unconfined, and then every client gets a warning notice. The command sees an
 * allow-listed environment (platform/process-env.ts). stdout and stderr stream as progress; the timeout
 * (default 120 s) and cancellation kill the whole group (SIGTERM, then SIGKILL after ~2 s).
 * The result keeps the last ~100 KiB of combined output; a non-zero exit is a failure.
 */
import { homedir } from 'node:os'
import { realpath } from 'node:fs/promises'
import type { BashInput } from '../../generated/tools/tools.gen.ts'
import { toolProcessEnv } from '../platform/process-env.ts'
import { errorText, fail, succeed } from './outcome.ts'
import { realPathList } from './paths.ts'
import { runInGroup, type RunResult } from './run-in-group.ts'
import { sandboxedCommand, unconfinedNotice } from './sandbox.ts'
import type { ProcessPort } from './ports.ts'
import type { Tool, ToolOutcome } from './types.ts'

/** Timeout when the call gives none. */
export const DEFAULT_BASH_TIMEOUT_MS = 120_000
/** Most characters of output kept in the result (the tail). */
export const MAX_BASH_OUTPUT_CHARS = 100 * 1024

/** Structured details of a Bash run, in `data` of the outcome. */
export interface BashData {
  /** Process id of the spawned process, which is also its process-group id. */
  pid: number | null
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  cancelled: boolean
  truncated: boolean
  sandboxed: boolean
  durationMs: number
}

function describe(r: RunResult, timeoutMs: number): { ok: boolean; head: string } {
  if (r.spawnError !== undefined) return { ok: false, head: `could not start the command: ${r.spawnError}` }
  if (r.cancelled) return { ok: false, head: 'command cancelled; its process group was killed' }
  if (r.timedOut) return { ok: false, head: `command timed out after ${timeoutMs} ms; its process group was killed` }
  if (r.exitCode === 0) return { ok: true, head: '' }
  if (r.exitCode !== null) return { ok: false, head: `command exited with code ${r.exitCode}` }
  return { ok: false, head: `command was killed by ${r.signal ?? 'a signal'}` }
}

/** Turn a finished run into the tool outcome (exported for tests). */
export function bashOutcome(r: RunResult, timeoutMs: number, sandboxed: boolean): ToolOutcome {
  const data: BashData = {
    pid: r.pid ?? null,
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    cancelled: r.cancelled,
    truncated: r.truncated,
    sandboxed,
    durationMs: r.durationMs,
  }
  const note = r.truncated
    ? `[output truncated: showing the last ${r.output.length} of ${r.totalOutputChars} characters]\n`
    : ''
  const body = note + r.output
  const { ok, head } = describe(r, timeoutMs)
  if (ok) return succeed(body === '' ? '(no output)' : body, data)
  return fail(body === '' ? head : `${head}\n${body}`, data)
}

/** The local process port: bubblewrap (sandbox.ts) around `bash -c`, in its own process group. */
export const localProcesses: ProcessPort = {
  async run(command, timeoutMs, ctx) {
    let cwd: string
    try {
      cwd = await realpath(ctx.cwd)
    } catch (e) {
      return { ok: false, error: `working directory ${ctx.cwd} is not accessible: ${errorText(e)}` }
    }
    const cmd = await sandboxedCommand(ctx.sandbox, cwd, command, {
      protectedPaths: await realPathList(ctx.protectedPaths),
      readOnlyPaths: await realPathList(ctx.readOnlyPaths),
      allowUnconfined: ctx.allowUnconfined,
      realHome: homedir(),
    })
    if (!cmd.ok) return { ok: false, error: cmd.error }
    if (cmd.unconfined) ctx.notice('warning', unconfinedNotice(ctx.sandbox))
    const result = await runInGroup(cmd.file, cmd.args, {
      cwd,
      env: toolProcessEnv({ home: cmd.home, extra: ctx.toolEnv }),
      tree: cmd.sandboxed,
      timeoutMs,
      signal: ctx.signal,
      maxOutputChars: MAX_BASH_OUTPUT_CHARS,
      onStdout: (chunk) => ctx.progress({ stdout: chunk }),
      onStderr: (chunk) => ctx.progress({ stderr: chunk }),
    })
    return { ok: true, result, sandboxed: cmd.sandboxed }
  },
}

/** The Bash tool over a process port. */
export function bashVia(processes: ProcessPort): Tool<BashInput> {
  return {
    name: 'Bash',
    permissionKey: (args) => args.command.trim(),
    async run(args, ctx) {
      const timeoutMs = args.timeout_ms ?? DEFAULT_BASH_TIMEOUT_MS
      if (ctx.signal.aborted) return fail('command cancelled before it started')
      const r = await processes.run(args.command, timeoutMs, ctx)
      if (!r.ok) return fail(r.error)
      return bashOutcome(r.result, timeoutMs, r.sandboxed)
    },
  }
}

/** The Bash tool (local processes). */
export const bashTool: Tool<BashInput> = bashVia(localProcesses)
