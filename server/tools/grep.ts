/**
 * The Grep tool: a JavaScript regular expression over the text files of the workspace (or a
 * directory or file inside it), honouring .gitignore files, skipping `.git`, `node_modules`,
 * binary and oversized files. Matches come back as `path:line:text`, paths relative to the
 * working directory, capped at `max_results`.
 */
import { readFile, stat } from 'node:fs/promises'
import type { GrepInput } from '../../generated/tools/tools.gen.ts'
import { compileGlob, globHasSlash } from './glob-match.ts'
import { errorText, fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath, resolveInWorkspace } from './paths.ts'
import { looksBinary, MAX_TEXT_FILE_BYTES } from './text-file.ts'
import type { Tool } from './types.ts'
import { walk } from './walk.ts'

/** Matched lines longer than this are cut. */
export const MAX_MATCH_LINE_CHARS = 500

/** The Grep tool. */
export const grepTool: Tool<GrepInput> = {
  name: 'Grep',
  permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path ?? '.'),
  async run(args, ctx) {
    let regex: RegExp
    try {
      regex = new RegExp(args.pattern, args.case_insensitive ? 'i' : '')
    } catch (e) {
      return fail(`invalid regular expression /${args.pattern}/: ${errorText(e)}`)
    }
    const where = await confinePath('Grep', ctx, args.path ?? '.')
    if (!where.ok) return where.outcome
    const { root, abs } = where
    let isDir: boolean
    try {
      isDir = (await stat(abs)).isDirectory()
    } catch (e) {
      return fail(`cannot search ${displayPath(root, abs)}: ${errorText(e)}`)
    }
    const globRe = args.glob ? compileGlob(args.glob) : undefined
    const globOnPath = args.glob ? globHasSlash(args.glob) : false
    const max = args.max_results ?? 200
    const lines: string[] = []
    let files = 0
    let truncated = false

    const searchFile = async (fileAbs: string): Promise<void> => {
      let buf: Buffer
      try {
        if ((await stat(fileAbs)).size > MAX_TEXT_FILE_BYTES) return
        buf = await readFile(fileAbs)
      } catch {
        return
      }
      if (looksBinary(buf)) return
      files++
      const name = displayPath(root, fileAbs)
      const text = buf.toString('utf8').split('\n')
      for (let i = 0; i < text.length; i++) {
        let line = text[i] ?? ''
        if (line.endsWith('\r')) line = line.slice(0, -1)
        if (!regex.test(line)) continue
        if (lines.length >= max) {
          truncated = true
          return
        }
        const shown = line.length > MAX_MATCH_LINE_CHARS ? `${line.slice(0, MAX_MATCH_LINE_CHARS)}…` : line
        lines.push(`${name}:${i + 1}:${shown}`)
      }
    }

    if (!isDir) await searchFile(abs)
    else {
      for await (const e of walk({ root, start: abs, signal: ctx.signal })) {
        if (e.isDir) continue
        if (globRe && !globRe.test(globOnPath ? e.relToStart : e.name)) continue
        if (e.isSymlink) {
          const target = await resolveInWorkspace(root, e.abs, { mode: ctx.sandbox })
          if (!target.ok) continue
        }
        await searchFile(e.abs)
        if (truncated || ctx.signal.aborted) break
      }
    }
    if (ctx.signal.aborted) return fail('search cancelled')
    const data = { matches: lines.length, truncated, filesSearched: files, path: displayPath(root, abs) }
    if (lines.length === 0) return succeed('No matches found', data)
    const note = truncated ? `\n(results truncated at ${max} matches; narrow the pattern, path or glob)` : ''
    return succeed(lines.join('\n') + note, data)
  },
}

