/**
 * Running a command in its own process group and killing the whole group: on timeout or abort
 * it gets SIGTERM, then SIGKILL after a grace period. When the command itself exits, processes
 * it left in its group (background jobs) are killed too, so nothing outlives the call. The
 * group is supervised as a tool's (platform/supervisor.ts) while it runs, so the server can kill
 * them all when it shuts down; a group led by bwrap takes its whole PID namespace with it.
 */
import type { ChildProcessByStdio } from 'node:child_process'
import { childProcess } from '../platform/builtins.ts'
import type { Readable } from 'node:stream'
import { killTree, signalGroup, supervise } from '../platform/supervisor.ts'
import { errorText } from './outcome.ts'
import { OutputTail } from './output-tail.ts'

/** Time between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000
/** How long output may keep flowing after the command exits before its group is killed. */
export const DRAIN_MS = 250

/** What {@link runInGroup} needs. */
export interface RunOptions {
  cwd: string
  env?: NodeJS.ProcessEnv
  timeoutMs: number
  signal: AbortSignal
  /** Most characters of combined output kept (the tail). */
  maxOutputChars: number
  onStdout?(chunk: string): void
  onStderr?(chunk: string): void
  graceMs?: number
  /**
   * The leader is a sandbox (bwrap) whose processes must all die with it: a timeout, cancel or
   * shutdown kills the whole tree at once ({@link killTree}) instead of SIGTERM, then SIGKILL.
   */
  tree?: boolean
}

/** How a command ended. */
export interface RunResult {
  pid?: number
  exitCode: number | null
  signal: NodeJS.Signals | null
  timedOut: boolean
  cancelled: boolean
  /** Combined stdout and stderr in arrival order: the last `maxOutputChars` characters. */
  output: string
  truncated: boolean
  totalOutputChars: number
  /** Set when the process could not be started. */
  spawnError?: string
  durationMs: number
}

/**
 * Spawn `file args` detached (its own process group, pgid = pid) with stdin closed, stream its
 * output, and resolve when it has exited and its output is drained. Never rejects.
 */
export function runInGroup(file: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const started = Date.now()
  const grace = opts.graceMs ?? KILL_GRACE_MS
  const tail = new OutputTail(opts.maxOutputChars)
  return new Promise<RunResult>((resolveRun) => {
    let timedOut = false
    let cancelled = false
    let exitCode: number | null = null
    let exitSignal: NodeJS.Signals | null = null
    let spawnError: string | undefined
    let terminating = false
    let finished = false
    const timers: NodeJS.Timeout[] = []
    const later = (ms: number, fn: () => void): void => {
      if (!finished) timers.push(setTimeout(fn, ms))
    }

    let child: ChildProcessByStdio<null, Readable, Readable>
    try {
      child = childProcess().spawn(file, args, {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    } catch (e) {
      // A bad cwd (ENOTDIR) or argument makes spawn throw synchronously.
      resolveRun({
        exitCode: null,
        signal: null,
        timedOut: false,
        cancelled: false,
        output: '',
        truncated: false,
        totalOutputChars: 0,
        spawnError: errorText(e),
        durationMs: Date.now() - started,
      })
      return
    }
    const pid = child.pid
    const untrack =
      pid === undefined
        ? () => {}
        : supervise(pid, 'tool', () => (opts.tree ? killTree(pid) : void signalGroup(pid, 'SIGKILL')))

    const terminate = (): void => {
      if (terminating || pid === undefined) return
      terminating = true
      if (opts.tree) return killTree(pid)
      signalGroup(pid, 'SIGTERM')
      later(grace, () => signalGroup(pid, 'SIGKILL'))
    }
    const onAbort = (): void => {
      // After the command has exited only its leftovers are killed; the run was not cancelled.
      if (exitCode === null && exitSignal === null) cancelled = true
      terminate()
    }

    const finish = (): void => {
      if (finished) return
      finished = true
      for (const t of timers) clearTimeout(t)
      opts.signal.removeEventListener('abort', onAbort)
      // Whatever is left of the group (background jobs that closed their output) dies too.
      if (pid !== undefined) signalGroup(pid, 'SIGKILL')
      untrack()
      resolveRun({
        pid,
        exitCode,
        signal: exitSignal,
        timedOut,
        cancelled,
        output: tail.text(),
        truncated: tail.truncated,
        totalOutputChars: tail.total,
        spawnError,
        durationMs: Date.now() - started,
      })
    }

    const safe = (fn: ((chunk: string) => void) | undefined, chunk: string): void => {
      try {
        fn?.(chunk)
      } catch {
        // A failing progress sink must not break the command.
      }
    }
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      tail.push(chunk)
      safe(opts.onStdout, chunk)
    })
    child.stderr.on('data', (chunk: string) => {
      tail.push(chunk)
      safe(opts.onStderr, chunk)
    })

    child.on('error', (e) => {
      if (pid !== undefined) return
      spawnError ??= errorText(e)
      finish()
    })
    child.on('exit', (code, sig) => {
      exitCode = code
      exitSignal = sig
      // Background processes may still hold the pipes open: give the output a moment, then
      // kill what is left of the group; if the pipes still do not close, stop waiting.
      later(DRAIN_MS, () => {
        if (pid !== undefined) signalGroup(pid, 'SIGKILL')
        later(grace, () => {
          child.stdout.destroy()
          child.stderr.destroy()
          finish()
        })
      })
    })
    child.on('close', () => finish())

    if (pid === undefined) return
    if (opts.signal.aborted) onAbort()
    else opts.signal.addEventListener('abort', onAbort, { once: true })
    later(opts.timeoutMs, () => {
      if (exitCode !== null || exitSignal !== null) return
      timedOut = true
      terminate()
    })
  })
}
