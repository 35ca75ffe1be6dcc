/**
 * Tools that go through the ACP client when it offers them (`clientCapabilities.fs`): Write and
 * Edit write via `fs/write_text_file`, so the editor records the change in its own undo. Reads
 * (Read, Edit's old text) are pinned: the file is read locally through the verified open the
 * built-in Read uses, and the editor is asked too (`fs/read_text_file`), but its answer is used
 * only when it is exactly the pinned file's text. The editor opens the path itself, later, and
 * follows symlinks, so its answer cannot be shown to come from the checked file (a directory on
 * the way swapped for a symlink made it read outside files); a different answer (unsaved
 * changes, or such a redirect) is not shown: Read returns the disk's text with a note, Edit
 * refuses (docs/decisions/0220-acp-client-reads-pinned.md). Same names, arguments, outputs and
 * confinement as the built-ins; a client failure is a tool error; a cancelled turn withdraws
 * the request. When the client offers `terminal`, Bash runs
 * in the editor's terminal (`terminal/create`, `wait_for_exit`, `output`, `kill`, `release`)
 * only under `--sandbox danger-full-access`: in the confined modes it stays local, inside
 * bubblewrap, which cannot reach into the editor's terminal (docs/decisions/0070). While the
 * command runs, its output is polled (`terminal/output` every {@link TERMINAL_POLL_MS} ms) and
 * what is new streams as tool progress, like the local Bash's output.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { BashInput, EditInput, ReadInput, WriteInput } from '../../../generated/tools/tools.gen.ts'
import { bashOutcome, bashTool, DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_OUTPUT_CHARS } from '../../tools/bash.ts'
import type { Connection } from '../../../client/wire/jsonrpc/connection.ts'
import { typedPeer, type Peer } from '../../jsonrpc/peer.ts'
import { acpV1Methods } from '../../../generated/acp/v1-methods.gen.ts'
import { planEdit } from '../../tools/edit.ts'
import { errorText, fail, succeed } from '../../tools/outcome.ts'
import { confinePath, displayPath, lexicalPath } from '../../tools/paths.ts'
import { writeTool } from '../../tools/write.ts'
import { readConfinedText, readWindow } from '../../tools/read.ts'
import type { Tool, ToolContext, ToolOutcome } from '../../tools/types.ts'

export interface ClientFs {
  readTextFile?: boolean
  writeTextFile?: boolean
}

/** The ACP client's methods, typed from the v1 method table (answers checked against it). */
type Editor = Peer<typeof acpV1Methods>

async function readVia(
  conn: Editor,
  sessionId: string,
  abs: string,
  ctx: ToolContext,
): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  try {
    const r = await conn.request('fs/read_text_file', { sessionId, path: abs }, { signal: ctx.signal })
    return { ok: true, text: r.content }
  } catch (e) {
    return { ok: false, error: errorText(e) }
  }
}

async function writeVia(
  conn: Editor,
  sessionId: string,
  abs: string,
  content: string,
  ctx: ToolContext,
): Promise<string | undefined> {
  try {
    await conn.request('fs/write_text_file', { sessionId, path: abs, content }, { signal: ctx.signal })
    return undefined
  } catch (e) {
    return errorText(e)
  }
}

/**
 * The text of `path` as pinned on disk (the verified open of the built-in Read) and whether the
 * editor, asked for the same path, answered exactly that text. The editor's answer itself is
 * never returned (see the file header).
 */
async function readPinned(
  conn: Editor,
  sessionId: string,
  tool: string,
  ctx: ToolContext,
  path: string,
): Promise<
  | { ok: true; name: string; text: string; editor: 'agrees' | 'differs' | 'failed' }
  | { ok: false; outcome: ToolOutcome }
> {
  const file = await readConfinedText(tool, ctx, path)
  if (!file.ok) return file
  const where = await confinePath(tool, ctx, path)
  if (!where.ok) return where
  const editor = await readVia(conn, sessionId, where.abs, ctx)
  if (ctx.signal.aborted) return { ok: false, outcome: fail('cancelled') }
  return {
    ok: true,
    name: file.name,
    text: file.text,
    editor: !editor.ok ? 'failed' : editor.text === file.text ? 'agrees' : 'differs',
  }
}

const EDITOR_DIFFERS =
  "the editor's text for this file differs from the file on disk (unsaved changes?); it is not shown because it cannot be verified to come from this file"

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

/** Bash in the client's terminal (danger-full-access only; otherwise the local sandboxed Bash). */
function terminalBash(conn: Editor, sessionId: string): Tool<BashInput> {
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
        const created = await conn.request(
          'terminal/create',
          {
            sessionId,
            command: 'bash',
            args: ['-c', args.command],
            cwd: ctx.cwd,
            outputByteLimit: MAX_BASH_OUTPUT_CHARS,
          },
          { signal: ctx.signal },
        )
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
        const exit = await conn.request('terminal/wait_for_exit', ref)
        polling.abort()
        const out = await conn.request('terminal/output', ref)
        const output = out.output
        return bashOutcome(
          {
            exitCode: exit.exitCode ?? null,
            signal: (exit.signal ?? null) as NodeJS.Signals | null,
            timedOut,
            cancelled,
            output,
            truncated: out.truncated,
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
export function clientTools(
  connection: Connection,
  sessionId: string,
  fs: ClientFs | undefined,
  terminal = false,
): Map<string, Tool> {
  const conn: Editor = typedPeer(connection, acpV1Methods)
  const tools = new Map<string, Tool>()
  if (terminal) tools.set('Bash', terminalBash(conn, sessionId))
  if (fs?.readTextFile) {
    const read: Tool<ReadInput> = {
      name: 'Read',
      permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
      async run(args, ctx) {
        const file = await readPinned(conn, sessionId, 'Read', ctx, args.path)
        if (!file.ok) return file.outcome
        if (file.editor === 'agrees') return readWindow(file.name, file.text, args, { via: 'client' })
        const out = readWindow(file.name, file.text, args, { via: 'disk', editor: file.editor })
        return out.ok && file.editor === 'differs'
          ? { ...out, output: `${out.output}\n\n(note: ${EDITOR_DIFFERS})` }
          : out
      },
    }
    tools.set('Read', read)
  }
  if (fs?.writeTextFile) {
    const write: Tool<WriteInput> = {
      name: 'Write',
      permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
      // The old text on disk, through the verified open (an editor's answer is not verified).
      preview: (args, ctx) => writeTool.preview!(args, ctx),
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
        if (args.old_string === args.new_string)
          return fail('old_string and new_string are identical; nothing to change')
        const file = await readPinned(conn, sessionId, 'Edit', ctx, args.path)
        if (!file.ok) return file.outcome
        if (file.editor === 'differs')
          return fail(`cannot edit ${name}: ${EDITOR_DIFFERS}; save or revert it in the editor first`)
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
