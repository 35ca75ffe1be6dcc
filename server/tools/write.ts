/**
 * The Write tool: create or overwrite a workspace file, creating missing parent directories,
 * through a file port (ports.ts). The built-in writes the local disk (local-files.ts: the file
 * written is the one the path check approved, and a FIFO cannot block it). The file-change
 * tracker hears about the write before and after.
 */
import type { WriteInput } from '../../generated/tools/tools.gen.ts'
import { localFiles } from './local-files.ts'
import { succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath, resolveInWorkspace } from './paths.ts'
import type { FilePort } from './ports.ts'
import { openGuard } from './safe-open.ts'
import { readTextFile } from './text-file.ts'
import type { Tool } from './types.ts'

/** The largest old text a Write preview carries (the bound of `file_edit` diffs). */
export const PREVIEW_MAX_BYTES = 1024 * 1024

/** Write over `files`; the built-in Write is {@link writeTool}, over the local disk. */
export function writeVia(files: FilePort): Tool<WriteInput> {
  return {
    name: 'Write',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    // The old text on disk, through the verified open, whatever the port (an editor's answer is not verified).
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
      const wrote = await files.write({ tool: 'Write', abs: where.abs, root: where.root, name }, args.content, ctx)
      if (!wrote.ok) return wrote.outcome
      const bytes = Buffer.byteLength(args.content, 'utf8')
      return succeed(`${wrote.created ? 'Created' : 'Wrote'} ${name} (${bytes} bytes)`, {
        path: name,
        bytes,
        ...wrote.extra,
      })
    },
  }
}

/** The Write tool. */
export const writeTool = writeVia(localFiles)
