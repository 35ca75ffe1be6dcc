/**
 * The file port over another view of the files (ports.ts `TextView`: an editor's buffers).
 * Writes go through the view, so the editor records the change in its own undo. Reads are
 * pinned: the file is read locally through the verified open (local-files.ts), and the view is
 * asked too, but its answer is used only when it is exactly the pinned file's text. The editor
 * opens the path itself, later, and follows symlinks, so its answer cannot be shown to come from
 * the checked file (a directory on the way swapped for a symlink made it read outside files); a
 * different answer (unsaved changes, or such a redirect) is not shown: a read returns the disk's
 * text with a note, an update refuses (docs/decisions/0220-acp-client-reads-pinned.md). A
 * view's failure is a tool error; a cancelled turn withdraws the request.
 */
import { fail } from './outcome.ts'
import { localFiles } from './local-files.ts'
import type { FileFailure, FilePort, FileTarget, TextView } from './ports.ts'
import type { ToolContext } from './types.ts'

const EDITOR_DIFFERS =
  "the editor's text for this file differs from the file on disk (unsaved changes?); it is not shown because it cannot be verified to come from this file"

/**
 * The text of the file as pinned on disk and whether `view`, asked for the same path, answered
 * exactly that text. The view's answer itself is never returned (see the file header).
 */
async function readPinned(
  view: TextView,
  file: FileTarget,
  ctx: ToolContext,
): Promise<{ ok: true; text: string; editor: 'agrees' | 'differs' | 'failed' } | FileFailure> {
  const disk = await localFiles.read(file, ctx)
  if (!disk.ok) return disk
  const editor = await view.readText(file.abs, ctx.signal)
  if (ctx.signal.aborted) return { ok: false, outcome: fail('cancelled') }
  return {
    ok: true,
    text: disk.text,
    editor: !editor.ok ? 'failed' : editor.text === disk.text ? 'agrees' : 'differs',
  }
}

/** A file port whose reads are pinned to the local disk and whose writes go through `view`. */
export function pinnedFiles(view: TextView): FilePort {
  const write = async (file: FileTarget, content: string, ctx: ToolContext): Promise<FileFailure | undefined> => {
    await ctx.files.willChange(file.abs)
    try {
      const err = await view.writeText(file.abs, content, ctx.signal)
      if (err) return { ok: false, outcome: fail(`cannot write ${file.name}: ${err}`) }
    } finally {
      await ctx.files.changed(file.abs)
    }
    return undefined
  }
  return {
    async read(file, ctx) {
      const r = await readPinned(view, file, ctx)
      if (!r.ok) return r
      if (r.editor === 'agrees') return { ok: true, text: r.text, extra: { via: 'client' } }
      return {
        ok: true,
        text: r.text,
        extra: { via: 'disk', editor: r.editor },
        ...(r.editor === 'differs' ? { note: EDITOR_DIFFERS } : {}),
      }
    },
    async write(file, content, ctx) {
      return (await write(file, content, ctx)) ?? { ok: true, extra: { via: 'client' } }
    },
    async update(file, ctx, change) {
      const r = await readPinned(view, file, ctx)
      if (!r.ok) return r.outcome
      if (r.editor === 'differs')
        return fail(`cannot edit ${file.name}: ${EDITOR_DIFFERS}; save or revert it in the editor first`)
      const plan = change(r.text)
      if (!('updated' in plan)) return plan
      const failed = await write(file, plan.updated, ctx)
      return failed ? failed.outcome : plan.result({ via: 'client' })
    },
  }
}
