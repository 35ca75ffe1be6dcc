/**
 * The open_file tool: the model points the user at a file, optionally at a line ("look at this
 * line"). It changes nothing; the `file_open` event reaches editors as the ferret `file_open`
 * kind (docs/zed.md: reveal in editor) and the SSE `file_open` record. The file is opened the
 * way Read opens it (confined, verified, text only), so a hint never names a path the session
 * could not read, and a line past the end is an error the model can correct.
 */
import type { open_fileInput } from '../../generated/tools/tools.gen.ts'
import { fail, succeed } from './outcome.ts'
import { lexicalPath } from './paths.ts'
import { readConfinedText, splitLines } from './read.ts'
import type { Tool } from './types.ts'

export const openFileTool: Tool<open_fileInput> = {
  name: 'open_file',
  permissionKey: (args, ctx) => `${lexicalPath(ctx.cwd, args.path)}:${args.line ?? ''}`,
  async run(args, ctx) {
    const file = await readConfinedText('open_file', ctx, args.path)
    if (!file.ok) return file.outcome
    const name = file.name
    const total = splitLines(file.text).length
    if (args.line !== undefined && args.line > Math.max(total, 1))
      return fail(`line ${args.line} is past the end of ${name} (${total} lines)`)
    ctx.fileOpen?.(name, args.line)
    return succeed(`showed ${name}${args.line !== undefined ? `:${args.line}` : ''} to the user`, {
      path: name,
      ...(args.line !== undefined ? { line: args.line } : {}),
    })
  },
}
