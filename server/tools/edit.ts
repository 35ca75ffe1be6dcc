/**
 * The Edit tool: replace an exact string in a workspace file. No match is an error naming the
 * file; several matches are an error with the count unless `replace_all` is set. Returns the
 * number of replacements and a diff-style summary in `data`. The file is read, changed and
 * rewritten as one step of a file port (ports.ts `update`): the built-in over the local disk
 * opens it once and reads and rewrites it through that one descriptor (local-files.ts). The
 * file-change tracker hears about the write before and after.
 */
import type { EditInput } from '../../generated/tools/tools.gen.ts'
import { findOccurrences, replaceAt, replacementDiff } from './edit-diff.ts'
import { localFiles } from './local-files.ts'
import { fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath } from './paths.ts'
import type { FilePort, TextChange } from './ports.ts'
import type { Tool } from './types.ts'

/**
 * What an edit of `text` does: an error outcome (no match; several without `replace_all`), or
 * the updated text and, once written, the result to report.
 */
export function planEdit(args: EditInput, text: string, name: string): ReturnType<TextChange> {
  const at = findOccurrences(text, args.old_string)
  if (at.length === 0) return fail(`old_string was not found in ${name}`, { path: name, replacements: 0 })
  if (at.length > 1 && !(args.replace_all ?? false)) {
    return fail(
      `old_string occurs ${at.length} times in ${name}; include more surrounding context to make it unique, or set replace_all to true`,
      { path: name, matches: at.length, replacements: 0 },
    )
  }
  return {
    updated: replaceAt(text, args.old_string, args.new_string, at),
    result: (extra = {}) => {
      const diff = replacementDiff(name, text, args.old_string, args.new_string, at)
      const n = at.length
      return succeed(`Edited ${name}: ${n} replacement${n === 1 ? '' : 's'}\n${diff}`, {
        path: name,
        replacements: n,
        diff,
        ...extra,
      })
    },
  }
}

/** Edit over `files`; the built-in Edit is {@link editTool}, over the local disk. */
export function editVia(files: FilePort): Tool<EditInput> {
  return {
    name: 'Edit',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    async run(args, ctx) {
      const where = await confinePath('Edit', ctx, args.path, { forWrite: true })
      if (!where.ok) return where.outcome
      const name = displayPath(where.root, where.abs)
      if (args.old_string === args.new_string) return fail('old_string and new_string are identical; nothing to change')
      return files.update({ tool: 'Edit', abs: where.abs, root: where.root, name }, ctx, (text) =>
        planEdit(args, text, name),
      )
    },
  }
}

/** The Edit tool. */
export const editTool = editVia(localFiles)
