/**
 * Read, Write and Edit over a file port (an editor's view of the files: ports.ts). Writes go
 * through the port, so the editor records the change in its own undo. Reads are pinned: the file
 * is read locally through the verified open the built-in Read uses, and the port is asked too,
 * but its answer is used only when it is exactly the pinned file's text. The editor opens the
 * path itself, later, and follows symlinks, so its answer cannot be shown to come from the
 * checked file (a directory on the way swapped for a symlink made it read outside files); a
 * different answer (unsaved changes, or such a redirect) is not shown: Read returns the disk's
 * text with a note, Edit refuses (docs/decisions/0220-acp-client-reads-pinned.md). Same names,
 * arguments, outputs and confinement as the built-ins; a port failure is a tool error; a
 * cancelled turn withdraws the request.
 */
import type { EditInput, ReadInput, WriteInput } from '../../generated/tools/tools.gen.ts'
import { planEdit } from './edit.ts'
import { fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath } from './paths.ts'
import type { FilePort } from './ports.ts'
import { readConfinedText, readWindow } from './read.ts'
import type { Tool, ToolContext, ToolOutcome } from './types.ts'
import { writeTool } from './write.ts'

/**
 * The text of `path` as pinned on disk (the verified open of the built-in Read) and whether the
 * port, asked for the same path, answered exactly that text. The port's answer itself is
 * never returned (see the file header).
 */
async function readPinned(
  files: FilePort,
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
  const editor = await files.readText(where.abs, ctx.signal)
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

/** Read over `files` (pinned: see the file header). */
export function readVia(files: FilePort): Tool<ReadInput> {
  return {
    name: 'Read',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    async run(args, ctx) {
      const file = await readPinned(files, 'Read', ctx, args.path)
      if (!file.ok) return file.outcome
      if (file.editor === 'agrees') return readWindow(file.name, file.text, args, { via: 'client' })
      const out = readWindow(file.name, file.text, args, { via: 'disk', editor: file.editor })
      return out.ok && file.editor === 'differs'
        ? { ...out, output: `${out.output}\n\n(note: ${EDITOR_DIFFERS})` }
        : out
    },
  }
}

/** Write over `files`. */
export function writeVia(files: FilePort): Tool<WriteInput> {
  return {
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
        const err = await files.writeText(where.abs, args.content, ctx.signal)
        if (err) return fail(`cannot write ${name}: ${err}`)
      } finally {
        await ctx.files.changed(where.abs)
      }
      const bytes = Buffer.byteLength(args.content, 'utf8')
      return succeed(`Wrote ${name} (${bytes} bytes)`, { path: name, bytes, via: 'client' })
    },
  }
}

/** Edit over `files`: the pinned text must agree with the port's before it writes. */
export function editVia(files: FilePort): Tool<EditInput> {
  return {
    name: 'Edit',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    async run(args, ctx) {
      const where = await confinePath('Edit', ctx, args.path, { forWrite: true })
      if (!where.ok) return where.outcome
      const name = displayPath(where.root, where.abs)
      if (args.old_string === args.new_string) return fail('old_string and new_string are identical; nothing to change')
      const file = await readPinned(files, 'Edit', ctx, args.path)
      if (!file.ok) return file.outcome
      if (file.editor === 'differs')
        return fail(`cannot edit ${name}: ${EDITOR_DIFFERS}; save or revert it in the editor first`)
      const plan = planEdit(args, file.text, name)
      if (!('updated' in plan)) return plan
      await ctx.files.willChange(where.abs)
      try {
        const err = await files.writeText(where.abs, plan.updated, ctx.signal)
        if (err) return fail(`cannot write ${name}: ${err}`)
      } finally {
        await ctx.files.changed(where.abs)
      }
      return plan.result({ via: 'client' })
    },
  }
}
