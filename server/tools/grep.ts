/**
 * The Grep tool: a regular expression (ripgrep's syntax: Rust regex, linear time) over the text
 * files of the workspace (or a directory or file inside it), honouring .gitignore files,
 * skipping `.git`, `node_modules`, binary and oversized files, FIFOs, sockets, devices and
 * protected paths. Matches come back as `path:line:text`, paths relative to the working
 * directory, capped at `max_results`.
 *
 * The walk (walk.ts) picks the files; each is opened through safe-open.ts (a regular file inside
 * the workspace, whatever happens to the path meanwhile) and its descriptor is searched by
 * ripgrep out of process (ripgrep.ts), in batches, so no pattern can block the event loop and a
 * cancel kills the search.
 */
import { stat } from 'node:fs/promises'
import type { GrepInput } from '../../generated/tools/tools.gen.ts'
import { compileGlob, GlobError, globHasSlash, type GlobMatcher } from './glob-match.ts'
import { errorText, fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath, realPathList, resolveInWorkspace, violation } from './paths.ts'
import { locateRipgrep, runRipgrep } from './ripgrep.ts'
import { openGuard, openVerified, type OpenedFile, type OpenGuard } from './safe-open.ts'
import { handleLooksBinary, MAX_TEXT_FILE_BYTES } from './text-file.ts'
import type { Tool, ToolOutcome } from './types.ts'
import { walk } from './walk.ts'

/** Matched lines longer than this are cut. */
export const MAX_MATCH_LINE_CHARS = 500
/** Files handed to one ripgrep process. */
export const GREP_BATCH_FILES = 64

/** A file ready to search: its verified open handle and how it is shown. */
interface Candidate {
  file: OpenedFile
  name: string
}

/** Open `abs` for searching: a text file inside the guard within the size cap, else undefined. */
async function openCandidate(abs: string, guard: OpenGuard): Promise<OpenedFile | undefined> {
  const opened = await openVerified(abs, guard, 'read')
  if (!opened.ok) return undefined
  try {
    if (opened.size <= MAX_TEXT_FILE_BYTES && !(await handleLooksBinary(opened.fh))) return opened
  } catch {
    // unreadable: skipped like a binary file
  }
  await opened.fh.close().catch(() => {})
  return undefined
}

/** The Grep tool. */
export const grepTool: Tool<GrepInput> = {
  name: 'Grep',
  permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path ?? '.'),
  async run(args, ctx) {
    const where = await confinePath('Grep', ctx, args.path ?? '.')
    if (!where.ok) return where.outcome
    const { root, abs } = where
    let isDir: boolean
    try {
      // stat never opens the file, so a FIFO cannot block here.
      isDir = (await stat(abs)).isDirectory()
    } catch (e) {
      return fail(`cannot search ${displayPath(root, abs)}: ${errorText(e)}`)
    }
    let globRe: GlobMatcher | undefined
    try {
      globRe = args.glob ? await compileGlob(args.glob) : undefined
    } catch (e) {
      return fail(e instanceof GlobError ? e.message : `invalid glob: ${errorText(e)}`)
    }
    const rg = await locateRipgrep()
    if (!rg.ok) return fail(`Grep cannot run: ${rg.error}`)
    const globOnPath = args.glob ? globHasSlash(args.glob) : false
    const guard = await openGuard(ctx, root)
    const max = args.max_results ?? 200
    const lines: string[] = []
    let files = 0
    let truncated = false
    let searched = false
    let batch: Candidate[] = []

    /** Search the batch; an error outcome for a bad pattern. */
    const flush = async (): Promise<ToolOutcome | undefined> => {
      const current = batch
      batch = []
      searched = true
      try {
        const r = await runRipgrep({
          rg: rg.path,
          pattern: args.pattern,
          caseInsensitive: args.case_insensitive ?? false,
          fds: current.map((c) => c.file.fh.fd),
          signal: ctx.signal,
          onMatch(index, line, text) {
            if (lines.length >= max) {
              truncated = true
              return false
            }
            const shown = text.length > MAX_MATCH_LINE_CHARS ? `${text.slice(0, MAX_MATCH_LINE_CHARS)}…` : text
            lines.push(`${current[index]?.name ?? '?'}:${line}:${shown}`)
            return true
          },
        })
        if (!r.ok) return fail(`invalid regular expression /${args.pattern}/: ${r.error}`)
        return undefined
      } finally {
        await Promise.all(current.map((c) => c.file.fh.close().catch(() => {})))
      }
    }

    const add = async (fileAbs: string): Promise<ToolOutcome | undefined> => {
      const file = await openCandidate(fileAbs, guard)
      if (!file) return undefined
      files++
      batch.push({ file, name: displayPath(root, file.abs) })
      return batch.length >= GREP_BATCH_FILES ? flush() : undefined
    }

    let error: ToolOutcome | undefined
    try {
      if (!isDir) {
        // A file named explicitly: say why it cannot be searched.
        const opened = await openVerified(abs, guard, 'read')
        if (!opened.ok) {
          if (opened.kind === 'violation') return violation('Grep', ctx, abs, opened.reason)
          if (opened.kind === 'not_regular')
            return fail(
              `${displayPath(root, abs)} is not a regular file (a FIFO, socket or device); only regular files are searched`,
            )
          return fail(`cannot search ${displayPath(root, abs)}: ${opened.reason}`)
        }
        await opened.fh.close()
        error = await add(abs)
      } else {
        const skip = await realPathList(ctx.protectedPaths)
        for await (const e of walk({ root, start: abs, signal: ctx.signal, skip })) {
          if (e.isDir) continue
          if (globRe && !globRe.test(globOnPath ? e.relToStart : e.name)) continue
          let target = e.abs
          if (e.isSymlink) {
            const r = await resolveInWorkspace(root, e.abs, { mode: ctx.sandbox, protectedPaths: ctx.protectedPaths })
            if (!r.ok) continue
            target = r.abs
          }
          error = await add(target)
          if (error || truncated || ctx.signal.aborted) break
        }
      }
      // The last batch; with no file at all, still check the pattern.
      if (!error && !truncated && !ctx.signal.aborted && (batch.length > 0 || !searched)) error = await flush()
    } finally {
      await Promise.all(batch.map((c) => c.file.fh.close().catch(() => {})))
    }
    if (error) return error
    if (ctx.signal.aborted) return fail('search cancelled')
    const data = { matches: lines.length, truncated, filesSearched: files, path: displayPath(root, abs) }
    if (lines.length === 0) return succeed('No matches found', data)
    const note = truncated ? `\n(results truncated at ${max} matches; narrow the pattern, path or glob)` : ''
    return succeed(lines.join('\n') + note, data)
  },
}
