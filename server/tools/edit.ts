/**
 * The Edit tool: replace an exact string in a workspace file. No match is an error naming the
 * file; several matches are an error with the count unless `replace_all` is set. Returns the
 * number of replacements and a diff-style summary in `data`. The file is opened once, through
 * safe-open.ts, and read and rewritten through that one descriptor, so what is written is the
 * file that was read and checked. The file-change tracker hears about the write before and after.
 */
import type { EditInput } from '../../generated/tools/tools.gen.ts'
import { findOccurrences, replaceAt, replacementDiff } from './edit-diff.ts'
import { errorText, fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath } from './paths.ts'
import { openGuard, openVerified, overwrite } from './safe-open.ts'
import { openFailureText, readTextFrom } from './text-file.ts'
import type { FileHandle } from 'node:fs/promises'
import type { Tool, ToolContext, ToolOutcome } from './types.ts'
import { writeOpenFailure } from './write.ts'

/**
 * What an edit of `text` does: an error outcome (no match; several without `replace_all`), or
 * the updated text and, once written, the result to report. Shared with the ACP client-file Edit.
 */
export function planEdit(
  args: EditInput,
  text: string,
  name: string,
): ToolOutcome | { updated: string; result: (extra?: Record<string, unknown>) => ToolOutcome } {
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

/** Read, replace and rewrite through the one open descriptor `fh` of `abs`. */
async function editOpenFile(
  args: EditInput,
  ctx: ToolContext,
  fh: FileHandle,
  size: number,
  abs: string,
  name: string,
): Promise<ToolOutcome> {
  const file = await readTextFrom(fh, size, name)
  if (!file.ok) return fail(file.error)
  const plan = planEdit(args, file.text, name)
  if (!('updated' in plan)) return plan
  await ctx.files.willChange(abs)
  try {
    await overwrite(fh, Buffer.from(plan.updated, 'utf8'))
  } catch (e) {
    return fail(`cannot write ${name}: ${errorText(e)}`)
  } finally {
    await ctx.files.changed(abs)
  }
  return plan.result()
}

/** The Edit tool. */
export const editTool: Tool<EditInput> = {
  name: 'Edit',
  permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
  async run(args, ctx) {
    const where = await confinePath('Edit', ctx, args.path, { forWrite: true })
    if (!where.ok) return where.outcome
    const name = displayPath(where.root, where.abs)
    if (args.old_string === args.new_string) return fail('old_string and new_string are identical; nothing to change')
    const opened = await openVerified(where.abs, await openGuard(ctx, where.root), 'update')
    if (!opened.ok) {
      if (opened.kind === 'missing' || opened.kind === 'not_regular') return fail(openFailureText(opened, name).error)
      return writeOpenFailure('Edit', ctx, where.abs, name, opened)
    }
    try {
      return await editOpenFile(args, ctx, opened.fh, opened.size, where.abs, name)
    } finally {
      await opened.fh.close().catch(() => {})
    }
  },
}
