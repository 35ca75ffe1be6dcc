/**
 * The editor-backed ports (server/tools/ports.ts) of an ACP v1 client: files through
 * `fs/read_text_file` and `fs/write_text_file`, commands through its terminal (`terminal/create`,
 * `wait_for_exit`, `output`, `kill`, `release`). While a command runs its output is polled
 * (`terminal/output` every {@link TERMINAL_POLL_MS} ms) and what is new streams as tool
 * progress, like the local Bash's output.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { acpV1Methods } from '../../../generated/acp/v1-methods.gen.ts'
import type { Peer } from '../../jsonrpc/peer.ts'
import { MAX_BASH_OUTPUT_CHARS } from '../../tools/bash.ts'
import { errorText } from '../../tools/outcome.ts'
import { pinnedFiles } from '../../tools/pinned-files.ts'
import type { FilePort, ProcessPort } from '../../tools/ports.ts'

/** The ACP client's methods, typed from the v1 method table (answers checked against it). */
export type Editor = Peer<typeof acpV1Methods>

/** The editor's files (its buffers), reads pinned to the local disk (server/tools/pinned-files.ts). */
export function editorFiles(conn: Editor, sessionId: string): FilePort {
  return pinnedFiles({
    async readText(abs, signal) {
      try {
        const r = await conn.request('fs/read_text_file', { sessionId, path: abs }, { signal })
        return { ok: true, text: r.content }
      } catch (e) {
        return { ok: false, error: errorText(e) }
      }
    },
    async writeText(abs, content, signal) {
      try {
        await conn.request('fs/write_text_file', { sessionId, path: abs, content }, { signal })
        return undefined
      } catch (e) {
        return errorText(e)
      }
    },
  })
}

/** How often a running terminal command's output is polled for progress. */
export const TERMINAL_POLL_MS = 250

/**
 * Poll the terminal's output until `stop` aborts, reporting what was appended since the last
 * poll. Output the client cut from the front (its byte limit) is not a continuation: nothing is
 * reported then, and the final output carries it. A failed poll ends polling.
 */
async function pollOutput(
  conn: Editor,
  ref: { sessionId: string; terminalId: string },
  stop: AbortSignal,
  report: (delta: string) => void,
): Promise<void> {
  let shown = ''
  while (!stop.aborted) {
    try {
      await delay(TERMINAL_POLL_MS, undefined, { signal: stop })
      const text = (await conn.request('terminal/output', ref, { signal: stop })).output
      if (stop.aborted) return
      if (text.length > shown.length && text.startsWith(shown)) report(text.slice(shown.length))
      shown = text
    } catch {
      return
    }
  }
}

/** The editor's terminal: `bash -c command` in the working directory, unconfined. */
export function editorTerminal(conn: Editor, sessionId: string): ProcessPort {
  return {
    async run(command, timeoutMs, ctx) {
      const t0 = Date.now()
      let terminalId: string
      try {
        const created = await conn.request(
          'terminal/create',
          { sessionId, command: 'bash', args: ['-c', command], cwd: ctx.cwd, outputByteLimit: MAX_BASH_OUTPUT_CHARS },
          { signal: ctx.signal },
        )
        terminalId = created.terminalId
      } catch (e) {
        return { ok: false, error: `could not start the command in the editor's terminal: ${errorText(e)}` }
      }
      const ref = { sessionId, terminalId }
      let timedOut = false
      let cancelled = false
      const kill = (): void => void conn.request('terminal/kill', ref).catch(() => {})
      const onAbort = (): void => {
        cancelled = true
        kill()
      }
      ctx.signal.addEventListener('abort', onAbort, { once: true })
      const timer = setTimeout(() => {
        timedOut = true
        kill()
      }, timeoutMs)
      const polling = new AbortController()
      void pollOutput(conn, ref, polling.signal, (delta) => ctx.progress({ stdout: delta }))
      try {
        const exit = await conn.request('terminal/wait_for_exit', ref)
        polling.abort()
        const out = await conn.request('terminal/output', ref)
        const output = out.output
        return {
          ok: true,
          sandboxed: false,
          result: {
            exitCode: exit.exitCode ?? null,
            signal: (exit.signal ?? null) as NodeJS.Signals | null,
            timedOut,
            cancelled,
            output,
            truncated: out.truncated,
            totalOutputChars: output.length,
            durationMs: Date.now() - t0,
          },
        }
      } catch (e) {
        return { ok: false, error: `the editor's terminal failed: ${errorText(e)}` }
      } finally {
        polling.abort()
        clearTimeout(timer)
        ctx.signal.removeEventListener('abort', onAbort)
        void conn.request('terminal/release', ref).catch(() => {})
      }
    },
  }
}
