/**
 * Tools that go through the ACP client when it offers them (`clientCapabilities.fs`): Read,
 * Write and Edit read and write via `fs/read_text_file` / `fs/write_text_file`, so the editor
 * sees its unsaved buffers and records the change in its own undo. Same names, arguments,
 * outputs and confinement as the built-ins (the path is checked against the workspace, the
 * sandbox and the protected paths before the client is asked); a client failure is a tool
 * error; a cancelled turn withdraws the request. When the client offers `terminal`, Bash runs
 * in the editor's terminal (`terminal/create`, `wait_for_exit`, `output`, `kill`, `release`)
 * only under `--sandbox danger-full-access`: in the confined modes it stays local, inside
 * bubblewrap, which cannot reach into the editor's terminal (docs/decisions/0070). While the
 * command runs, its output is polled (`terminal/output` every {@link TERMINAL_POLL_MS} ms) and
 * what is new streams as tool progress, like the local Bash's output.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { BashInput, EditInput, ReadInput, WriteInput } from '../../../generated/tools/tools.gen.ts'
import { bashOutcome, bashTool, DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_OUTPUT_CHARS } from '../../tools/bash.ts'
import type { Connection } from '../../jsonrpc/connection.ts'
import { planEdit } from '../../tools/edit.ts'
import { errorText, fail, succeed } from '../../tools/outcome.ts'
import { confinePath, displayPath, lexicalPath, resolveInWorkspace } from '../../tools/paths.ts'
import { PREVIEW_MAX_BYTES, writeTool } from '../../tools/write.ts'
import { readWindow } from '../../tools/read.ts'
import type { Tool, ToolContext } from '../../tools/types.ts'

export interface ClientFs {
  readTextFile?: boolean
  writeTextFile?: boolean
}

async function readVia(conn: Connection, sessionId: string, abs: string, ctx: ToolContext): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  try {
    const r = (await conn.request('fs/read_text_file', { sessionId, path: abs }, { signal: ctx.signal })) as { content?: unknown }
    if (typeof r?.content !== 'string') return { ok: false, error: 'the editor answered without content' }
    return { ok: true, text: r.content }
  } catch (e) {
    return { ok: false, error: errorText(e) }
  }
}

async function writeVia(conn: Connection, sessionId: string, abs: string, content: string, ctx: ToolContext): Promise<string | undefined> {
  try {
    await conn.request('fs/write_text_file', { sessionId, path: abs, content }, { signal: ctx.signal })
    return undefined
  } catch (e) {
    return errorText(e)
  }
}

/** How often a running terminal command's output is polled for progress. */
export const TERMINAL_POLL_MS = 250

/**
 * Poll the terminal's output until `stop` aborts, reporting what was appended since the last
 * poll. Output the client cut from the front (its byte limit) is not a continuation: nothing is
 * reported then, and the final output carries it. A failed poll ends polling.
 */
async function pollOutput(conn: Connection, ref: { sessionId: string; terminalId: string }, stop: AbortSignal, report: (delta: string) => void): Promise<void> {
  let shown = ''
  while (!stop.aborted) {
    try {
      await delay(TERMINAL_POLL_MS, undefined, { signal: stop })
      const out = (await conn.request('terminal/output', ref, { signal: stop })) as { output?: unknown }
      const text = typeof out?.output === 'string' ? out.output : ''
      if (stop.aborted) return
      if (text.length > shown.length && text.startsWith(shown)) report(text.slice(shown.length))
      shown = text
    } catch {
      return
    }
  }
}

/** Bash in the client's terminal (danger-full-access only; otherwise the local sandboxed Bash). */
function terminalBash(conn: Connection, sessionId: string): Tool<BashInput> {
  return {
    name: 'Bash',
    permissionKey: (args, ctx) => bashTool.permissionKey(args, ctx),
    async run(args, ctx) {
      if (ctx.sandbox !== 'danger-full-access') return bashTool.run(args, ctx)
      if (ctx.signal.aborted) return fail('command cancelled before it started')
      const timeoutMs = args.timeout_ms ?? DEFAULT_BASH_TIMEOUT_MS
      const t0 = Date.now()
      let terminalId: string
      try {
        const created = (await conn.request(
          'terminal/create',
          { sessionId, command: 'bash', args: ['-c', args.command], cwd: ctx.cwd, outputByteLimit: MAX_BASH_OUTPUT_CHARS },
          { signal: ctx.signal },
        )) as { terminalId?: unknown }
        if (typeof created?.terminalId !== 'string') return fail('could not start the command: the editor returned no terminal')
        terminalId = created.terminalId
      } catch (e) {
        return fail(`could not start the command in the editor's terminal: ${errorText(e)}`)
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
        const exit = (await conn.request('terminal/wait_for_exit', ref)) as { exitCode?: number | null; signal?: string | null }
        polling.abort()
        const out = (await conn.request('terminal/output', ref)) as { output?: string; truncated?: boolean }
        const output = typeof out?.output === 'string' ? out.output : ''
        return bashOutcome(
          {
            exitCode: typeof exit?.exitCode === 'number' ? exit.exitCode : null,
            signal: (exit?.signal ?? null) as NodeJS.Signals | null,
            timedOut,
            cancelled,
            output,
            truncated: out?.truncated === true,
            totalOutputChars: output.length,
            durationMs: Date.now() - t0,
          },
          timeoutMs,
          false,
        )
      } catch (e) {
        return fail(`the editor's terminal failed: ${errorText(e)}`)
      } finally {
        polling.abort()
        clearTimeout(timer)
        ctx.signal.removeEventListener('abort', onAbort)
        void conn.request('terminal/release', ref).catch(() => {})
      }
    },
  }
}

/** The tool substitutes for a client with these capabilities (empty when it offers none). */
export function clientTools(conn: Connection, sessionId: string, fs: ClientFs | undefined, terminal = false): Map<string, Tool> {
  const tools = new Map<string, Tool>()
  if (terminal) tools.set('Bash', terminalBash(conn, sessionId))
  if (fs?.readTextFile) {
    const read: Tool<ReadInput> = {
      name: 'Read',
      permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
      async run(args, ctx) {
        const where = await confinePath('Read', ctx, args.path)
        if (!where.ok) return where.outcome
        const name = displayPath(where.root, where.abs)
        const file = await readVia(conn, sessionId, where.abs, ctx)
        if (!file.ok) return fail(`cannot read ${name}: ${file.error}`)
        return readWindow(name, file.text, args, { via: 'client' })
      },
    }
    tools.set('Read', read)
  }
  if (fs?.writeTextFile) {
    const write: Tool<WriteInput> = {
      name: 'Write',
      permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
      // The old text the editor has (an unsaved buffer included); the disk's when it cannot say.
      async preview(args, ctx) {
        if (!fs.readTextFile) return writeTool.preview!(args, ctx)
        const where = await resolveInWorkspace(ctx.cwd, args.path, { forWrite: true, mode: ctx.sandbox, protectedPaths: ctx.protectedPaths, readOnlyPaths: ctx.readOnlyPaths })
        if (!where.ok) return undefined
        const file = await readVia(conn, sessionId, where.abs, ctx)
        if (!file.ok) return writeTool.preview!(args, ctx)
        return Buffer.byteLength(file.text, 'utf8') <= PREVIEW_MAX_BYTES ? { old_text: file.text } : undefined
      },
      async run(args, ctx) {
        const where = await confinePath('Write', ctx, args.path, { forWrite: true })
        if (!where.ok) return where.outcome
        const name = displayPath(where.root, where.abs)
        await ctx.files.willChange(where.abs)
        try {
          const err = await writeVia(conn, sessionId, where.abs, args.content, ctx)
          if (err) return fail(`cannot write ${name}: ${err}`)
        } finally {
          await ctx.files.changed(where.abs)
        }
        const bytes = Buffer.byteLength(args.content, 'utf8')
        return succeed(`Wrote ${name} (${bytes} bytes)`, { path: name, bytes, via: 'client' })
      },
    }
    tools.set('Write', write)
  }
  if (fs?.readTextFile && fs.writeTextFile) {
    const edit: Tool<EditInput> = {
      name: 'Edit',
      permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
      async run(args, ctx) {
        const where = await confinePath('Edit', ctx, args.path, { forWrite: true })
        if (!where.ok) return where.outcome
        const name = displayPath(where.root, where.abs)
        if (args.old_string === args.new_string) return fail('old_string and new_string are identical; nothing to change')
        const file = await readVia(conn, sessionId, where.abs, ctx)
        if (!file.ok) return fail(`cannot read ${name}: ${file.error}`)
        const plan = planEdit(args, file.text, name)
        if (!('updated' in plan)) return plan
        await ctx.files.willChange(where.abs)
        try {
          const err = await writeVia(conn, sessionId, where.abs, plan.updated, ctx)
          if (err) return fail(`cannot write ${name}: ${err}`)
        } finally {
          await ctx.files.changed(where.abs)
        }
        return plan.result({ via: 'client' })
      },
    }
    tools.set('Edit', edit)
  }
  return tools
}
