/**
 * The list_files tool: the entries of a workspace directory (directories end with `/`),
 * optionally recursive, with the same ignore rules as Grep and Glob. Paths are relative to the
 * working directory, capped at `max_entries`. FIFOs, sockets, devices and protected paths are
 * left out.
 */
import type { list_filesInput } from '../../generated/tools/tools.gen.ts'
import { fail, succeed } from './outcome.ts'
import { confineDirectory, displayPath, lexicalPath } from './paths.ts'
import type { Tool } from './types.ts'
import { walk } from './walk.ts'

/** The list_files tool. */
export const listFilesTool: Tool<list_filesInput> = {
  name: 'list_files',
  permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path ?? '.'),
  async run(args, ctx) {
    const where = await confineDirectory('list_files', ctx, args.path ?? '.', 'list')
    if (!where.ok) return where.outcome
    // The walk skips the protected paths the confinement resolved.
    const { root, abs, protectedPaths: skip, listing: startListing } = where
    const max = args.max_entries ?? 1000
    const entries: string[] = []
    let truncated = false
    for await (const e of walk({
      root,
      start: abs,
      recursive: args.recursive ?? false,
      signal: ctx.signal,
      skip,
      startListing,
    })) {
      if (entries.length >= max) {
        truncated = true
        break
      }
      entries.push(displayPath(root, e.abs) + (e.isDir ? '/' : ''))
    }
    if (ctx.signal.aborted) return fail('listing cancelled')
    const data = { count: entries.length, truncated }
    if (entries.length === 0) return succeed('(empty directory)', data)
    const note = truncated ? `\n(listing truncated at ${max} entries)` : ''
    return succeed(entries.join('\n') + note, data)
  },
}
