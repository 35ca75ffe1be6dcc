/**
 * The Write tool: create or overwrite a workspace file, creating missing parent directories.
 * The file written is the one the path check approved: it is opened through safe-open.ts (no
 * symlink on the way, a regular file only, its descriptor's real path checked), so a path swapped
 * after the check cannot redirect the write out of the workspace, and a FIFO cannot block it.
 * The file-change tracker hears about the write before and after.
 */
import type { WriteInput } from '../../generated/tools/tools.gen.ts'
import { errorText, fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath, resolveInWorkspace, violation } from './paths.ts'
import { readTextFile } from './text-file.ts'
import { openGuard, openVerified, overwrite, type OpenFailure } from './safe-open.ts'
import type { Tool, ToolContext, ToolOutcome } from './types.ts'

/** The tool error for a refused open of `abs` (shown as `name`) by a writing tool. */
export function writeOpenFailure(
  tool: string,
  ctx: ToolContext,
  abs: string,
  name: string,
  f: OpenFailure,
): ToolOutcome {
  if (f.kind === 'violation') return violation(tool, ctx, abs, f.reason)
  if (f.kind === 'directory') return fail(`${name} is a directory; cannot write file content to it`)
  if (f.kind === 'not_regular')
    return fail(`${name} is not a regular file (a FIFO, socket or device); only regular files can be written`)
  if (f.kind === 'missing') return fail(`file not found: ${name}`)
  return fail(`cannot write ${name}: ${f.reason}`)
}

/** The largest old text a Write preview carries (the bound of `file_edit` diffs). */
export const PREVIEW_MAX_BYTES = 1024 * 1024

/** The Write tool. */
export const writeTool: Tool<WriteInput> = {
  name: 'Write',
  permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
  async preview(args, ctx) {
    const where = await resolveInWorkspace(ctx.cwd, args.path, {
      forWrite: true,
      mode: ctx.sandbox,
      protectedPaths: ctx.protectedPaths,
      readOnlyPaths: ctx.readOnlyPaths,
    })
    if (!where.ok) return undefined
    const read = await readTextFile(where.abs, args.path, await openGuard(ctx, where.root))
    if (read.ok) return read.bytes <= PREVIEW_MAX_BYTES ? { old_text: read.text } : undefined
    return read.kind === 'missing' ? { old_text: null } : undefined
  },
  async run(args, ctx) {
    const where = await confinePath('Write', ctx, args.path, { forWrite: true })
    if (!where.ok) return where.outcome
    const name = displayPath(where.root, where.abs)
    const guard = await openGuard(ctx, where.root)
    const data = Buffer.from(args.content, 'utf8')
    // An existing file is opened before the tracker hears of it; a new one is announced first,
    // because creating it is already a change.
    let opened = await openVerified(where.abs, guard, 'write')
    if (!opened.ok && opened.kind !== 'missing') return writeOpenFailure('Write', ctx, where.abs, name, opened)
    await ctx.files.willChange(where.abs)
    try {
      if (!opened.ok) opened = await openVerified(where.abs, guard, 'write', { create: true, mkdirs: true })
      if (!opened.ok) return writeOpenFailure('Write', ctx, where.abs, name, opened)
      try {
        await overwrite(opened.fh, data)
      } catch (e) {
        return fail(`cannot write ${name}: ${errorText(e)}`)
      } finally {
        await opened.fh.close().catch(() => {})
      }
      const created = opened.created
      return succeed(`${created ? 'Created' : 'Wrote'} ${name} (${data.length} bytes)`, {
        path: name,
        bytes: data.length,
        created,
      })
    } finally {
      await ctx.files.changed(where.abs)
    }
  },
}
