/**
 * The open_file tool: the model points the user at a file, optionally at a line ("look at this
 * line"). It changes nothing; the `file_open` event reaches editors as the ferret `file_open`
 * kind (seeds/002: reveal in editor) and the SSE `file_open` record. The file is opened the
 * way Read opens it (confined, verified, text only), so a hint never names a path the session
 * could not read, and a line past the end is an error the model can correct.
 */
import type { open_fileInput } from '../../generated/tools/tools.gen.ts'
import { fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath, violation } from './paths.ts'
import { splitLines } from './read.ts'
import { openGuard } from './safe-open.ts'
import { readTextFile } from './text-file.ts'
import type { Tool } from './types.ts'

export const openFileTool: Tool<open_fileInput> = {
  name: 'open_file',
  permissionKey: (args, ctx) => `${lexicalPath(ctx.cwd, args.path)}:${args.line ?? ''}`,
  async run(args, ctx) {
    const where = await confinePath('open_file', ctx, args.path)
    if (!where.ok) return where.outcome
    const name = displayPath(where.root, where.abs)
    const file = await readTextFile(where.abs, name, await openGuard(ctx, where.root))
    if (!file.ok) return file.kind === 'violation' ? violation('open_file', ctx, where.abs, file.error) : fail(file.error)
    const total = splitLines(file.text).length
    if (args.line !== undefined && args.line > Math.max(total, 1)) return fail(`line ${args.line} is past the end of ${name} (${total} lines)`)
    ctx.fileOpen?.(name, args.line)
    return succeed(`showed ${name}${args.line !== undefined ? `:${args.line}` : ''} to the user`, { path: name, ...(args.line !== undefined ? { line: args.line } : {}) })
  },
}
