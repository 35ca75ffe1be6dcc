/**
 * The local file port (ports.ts): this process's disk through the verified opens of safe-open.ts
 * (docs/decisions/0022-verified-opens.md). The file read or written is the one the path check
 * approved: no symlink on the way, a regular file only, its descriptor's real path checked, so a
 * path swapped after the check cannot redirect it out of the workspace and a FIFO cannot block
 * it. An update opens the file once and reads and rewrites it through that one descriptor, so
 * what is written is the file that was read and checked.
 */
import { errorText, fail } from './outcome.ts'
import { violation } from './paths.ts'
import type { FilePort, FileTarget } from './ports.ts'
import { openGuard, openVerified, overwrite, type OpenFailure } from './safe-open.ts'
import { openFailureText, readTextFile, readTextFrom } from './text-file.ts'
import type { ToolContext, ToolOutcome } from './types.ts'

/** The tool error for a refused open of the file by a writing tool. */
function writeOpenFailure(ctx: ToolContext, file: FileTarget, f: OpenFailure): ToolOutcome {
  const { name } = file
  if (f.kind === 'violation') return violation(file.tool, ctx, file.abs, f.reason)
  if (f.kind === 'directory') return fail(`${name} is a directory; cannot write file content to it`)
  if (f.kind === 'not_regular')
    return fail(`${name} is not a regular file (a FIFO, socket or device); only regular files can be written`)
  if (f.kind === 'missing') return fail(`file not found: ${name}`)
  return fail(`cannot write ${name}: ${f.reason}`)
}

export const localFiles: FilePort = {
  async read(file, ctx) {
    const text = await readTextFile(file.abs, file.name, await openGuard(ctx, file.root))
    if (!text.ok)
      return {
        ok: false,
        outcome: text.kind === 'violation' ? violation(file.tool, ctx, file.abs, text.error) : fail(text.error),
      }
    return { ok: true, text: text.text, extra: {} }
  },

  async write(file, content, ctx) {
    const data = Buffer.from(content, 'utf8')
    const guard = await openGuard(ctx, file.root)
    // An existing file is opened before the tracker hears of it; a new one is announced first,
    // because creating it is already a change.
    let opened = await openVerified(file.abs, guard, 'write')
    if (!opened.ok && opened.kind !== 'missing') return { ok: false, outcome: writeOpenFailure(ctx, file, opened) }
    await ctx.files.willChange(file.abs)
    try {
      if (!opened.ok) opened = await openVerified(file.abs, guard, 'write', { create: true, mkdirs: true })
      if (!opened.ok) return { ok: false, outcome: writeOpenFailure(ctx, file, opened) }
      try {
        await overwrite(opened.fh, data)
      } catch (e) {
        return { ok: false, outcome: fail(`cannot write ${file.name}: ${errorText(e)}`) }
      } finally {
        await opened.fh.close().catch(() => {})
      }
      return { ok: true, created: opened.created, extra: { created: opened.created } }
    } finally {
      await ctx.files.changed(file.abs)
    }
  },

  async update(file, ctx, change) {
    const opened = await openVerified(file.abs, await openGuard(ctx, file.root), 'update')
    if (!opened.ok) {
      if (opened.kind === 'missing' || opened.kind === 'not_regular')
        return fail(openFailureText(opened, file.name).error)
      return writeOpenFailure(ctx, file, opened)
    }
    try {
      const read = await readTextFrom(opened.fh, opened.size, file.name)
      if (!read.ok) return fail(read.error)
      const plan = change(read.text)
      if (!('updated' in plan)) return plan
      await ctx.files.willChange(file.abs)
      try {
        await overwrite(opened.fh, Buffer.from(plan.updated, 'utf8'))
      } catch (e) {
        return fail(`cannot write ${file.name}: ${errorText(e)}`)
      } finally {
        await ctx.files.changed(file.abs)
      }
      return plan.result()
    } finally {
      await opened.fh.close().catch(() => {})
    }
  },
}
