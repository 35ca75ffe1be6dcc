/**
 * The Glob tool: workspace files whose path, relative to the search directory, matches a glob
 * (`src/**\/*.ts`), with the same ignore rules as Grep. Paths come back relative to the working
 * directory, in name order, capped at `max_results`. Matching is bounded (glob-match.ts: a cap
 * on `*` per segment, segment-by-segment matching); FIFOs, sockets, devices and protected paths
 * are never listed.
 */
import { isAbsolute, relative } from 'node:path'
import type { GlobInput } from '../../generated/tools/tools.gen.ts'
import { compileGlob, GlobError, type GlobMatcher } from './glob-match.ts'
import { errorText, fail, succeed } from './outcome.ts'
import { confineDirectory, displayPath, isInside, lexicalPath, toFsPath } from './paths.ts'
import type { Tool } from './types.ts'
import { walk } from './walk.ts'

/** The Glob tool. */
export const globTool: Tool<GlobInput> = {
  name: 'Glob',
  permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path ?? '.'),
  async run(args, ctx) {
    const where = await confineDirectory('Glob', ctx, args.path ?? '.', 'search')
    if (!where.ok) return where.outcome
    // The walk skips the protected paths the confinement resolved.
    const { root, abs, protectedPaths: skip, listing: startListing } = where
    let pattern = args.pattern
    const fsPattern = toFsPath(pattern)
    if (!fsPattern.ok) return fail(fsPattern.reason)
    if (isAbsolute(fsPattern.path)) {
      if (!isInside(abs, fsPattern.path))
        return fail(`an absolute pattern must lie inside the search directory ${abs}; use a relative pattern`)
      pattern = relative(abs, fsPattern.path) || '**'
    }
    let re: GlobMatcher
    try {
      re = await compileGlob(pattern)
    } catch (e) {
      return fail(e instanceof GlobError ? e.message : `invalid glob "${pattern}": ${errorText(e)}`)
    }
    const max = args.max_results ?? 1000
    const found: string[] = []
    let truncated = false
    for await (const e of walk({ root, start: abs, signal: ctx.signal, skip, startListing })) {
      if (e.isDir || !re.test(e.relToStart)) continue
      if (found.length >= max) {
        truncated = true
        break
      }
      found.push(displayPath(root, e.abs))
    }
    if (ctx.signal.aborted) return fail('search cancelled')
    const data = { count: found.length, truncated }
    if (found.length === 0) return succeed('No files found', data)
    const note = truncated ? `\n(results truncated at ${max} files; narrow the pattern or path)` : ''
    return succeed(found.join('\n') + note, data)
  },
}
