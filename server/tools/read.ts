/**
 * The Read tool: a text file of the workspace as numbered lines (`     1\tfirst line`), with
 * 1-based `offset` and `limit`. Binary files, directories, FIFOs, sockets, devices, missing files
 * and files over 10 MiB are clear errors. The file is read through a file port (ports.ts): the
 * built-in over the local disk, where the file read is the one the path check approved
 * (local-files.ts).
 */
import type { ReadInput } from '../../generated/tools/tools.gen.ts'
import { fail, succeed } from './outcome.ts'
import { localFiles } from './local-files.ts'
import { confinePath, displayPath, lexicalPath } from './paths.ts'
import type { FileFailure, FilePort } from './ports.ts'
import type { Tool, ToolContext, ToolOutcome } from './types.ts'

/** Lines returned when no `limit` is given. */
export const DEFAULT_READ_LIMIT = 2000
/** Longer lines are cut to this many characters. */
export const MAX_LINE_CHARS = 2000

/** Split text into lines, without the empty "line" after a final newline; `\r\n` counts as one break. */
export function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
}

/** One output line: the 1-based number right-aligned in 6 columns, a tab, the text. */
export function numberLine(n: number, text: string): string {
  const cut =
    text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}… [line truncated, ${text.length} chars]` : text
  return `${String(n).padStart(6)}\t${cut}`
}

/** The numbered lines `offset`..`offset+limit-1` of a file's text: the Read result (also for ACP clients' files). */
export function readWindow(
  name: string,
  text: string,
  args: Pick<ReadInput, 'offset' | 'limit'>,
  extra: Record<string, unknown> = {},
): ToolOutcome {
  const lines = splitLines(text)
  const total = lines.length
  const offset = args.offset ?? 1
  const limit = args.limit ?? DEFAULT_READ_LIMIT
  if (total === 0) return succeed('(empty file)', { path: name, totalLines: 0, startLine: 0, endLine: 0, ...extra })
  if (offset > total) return fail(`offset ${offset} is past the end of ${name} (${total} lines)`)
  const end = Math.min(total, offset - 1 + limit)
  const out: string[] = []
  for (let i = offset - 1; i < end; i++) out.push(numberLine(i + 1, lines[i] ?? ''))
  let output = out.join('\n')
  const more = end < total
  if (more || offset > 1)
    output += `\n\n(lines ${offset}-${end} of ${total}${more ? '; use offset/limit to read more' : ''})`
  return succeed(output, { path: name, totalLines: total, startLine: offset, endLine: end, truncated: more, ...extra })
}

/**
 * A workspace text file as the file tools read it: confined, opened verified, text only. Its
 * display name and text, or the failed outcome (a sandbox violation reported as `tool`'s).
 */
export async function readConfinedText(
  tool: string,
  ctx: ToolContext,
  path: string,
  files: FilePort = localFiles,
): Promise<{ ok: true; name: string; text: string; extra: Record<string, unknown>; note?: string } | FileFailure> {
  const where = await confinePath(tool, ctx, path)
  if (!where.ok) return where
  const name = displayPath(where.root, where.abs)
  const file = await files.read({ tool, abs: where.abs, root: where.root, name }, ctx)
  return file.ok ? { ...file, name } : file
}

/** Read over `files`; the built-in Read is {@link readTool}, over the local disk. */
export function readVia(files: FilePort): Tool<ReadInput> {
  return {
    name: 'Read',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    async run(args, ctx) {
      const file = await readConfinedText('Read', ctx, args.path, files)
      if (!file.ok) return file.outcome
      const out = readWindow(file.name, file.text, args, file.extra)
      return out.ok && file.note ? { ...out, output: `${out.output}\n\n(note: ${file.note})` } : out
    },
  }
}

/** The Read tool. */
export const readTool = readVia(localFiles)
