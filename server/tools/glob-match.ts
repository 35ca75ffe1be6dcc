/**
 * Glob patterns from the model, matched against `/`-separated relative paths in bounded time.
 * `*` and `?` stay within one path segment, `**` as a whole segment spans any number of
 * segments (none included), `[abc]` / `[!abc]` / `[[:alpha:]]` are character classes, `{a,b}`
 * alternatives (nested allowed), `\x` escapes. `*` also matches names starting with a dot.
 *
 * Each segment is compiled by picomatch (a maintained matcher) after every character that could
 * reach its regular expression as syntax — `(`, `|`, `{n}`, `+`, `!`, `@` … — is escaped, so a
 * segment's expression is only literals, one-character classes and at most
 * {@link MAX_STARS_PER_SEGMENT} `*`. Segments are matched one at a time (an NFA over the
 * segments, never one expression over the whole path), so backtracking cannot multiply across
 * segments. Patterns past the caps are rejected with a clear error. See docs/decisions/0021.
 */
import type Picomatch from 'picomatch'

// picomatch loads with the first glob compiled (a Glob or Grep call), not at start-up.
let picomatch: typeof Picomatch | undefined

/** Most `*` runs in one path segment (each run can backtrack over the whole segment). */
export const MAX_STARS_PER_SEGMENT = 3
/** Most `{a,b}` alternatives a pattern may expand to. */
export const MAX_GLOB_ALTERNATIVES = 64
/** Most path segments in a pattern. */
export const MAX_GLOB_SEGMENTS = 32
/** Longest pattern accepted. */
export const MAX_GLOB_LENGTH = 1024

/** A pattern the matcher refuses (the message is for the model). */
export class GlobError extends Error {}

/** A compiled glob. */
export interface GlobMatcher {
  /** True when the `/`-separated relative `path` matches. */
  test(path: string): boolean
}

/** Expand the `{a,b}` alternatives of `pattern`; more than `max` alternatives throw a GlobError. */
export function expandBraces(pattern: string, max = MAX_GLOB_ALTERNATIVES): string[] {
  const out: string[] = []
  const visit = (p: string): void => {
    let depth = 0
    let open = -1
    const commas: number[] = []
    for (let i = 0; i < p.length; i++) {
      const c = p[i]
      if (c === '\\') {
        i++
        continue
      }
      if (c === '{') {
        if (depth === 0) {
          open = i
          commas.length = 0
        }
        depth++
      } else if (c === '}' && depth > 0) {
        depth--
        if (depth === 0 && commas.length > 0) {
          const bounds = [open, ...commas, i]
          for (let k = 0; k + 1 < bounds.length; k++) {
            visit(p.slice(0, open) + p.slice((bounds[k] ?? 0) + 1, bounds[k + 1]) + p.slice(i + 1))
          }
          return
        }
      } else if (c === ',' && depth === 1) commas.push(i)
    }
    if (out.length >= max)
      throw new GlobError(`the glob expands to more than ${max} {…} alternatives; use fewer braces`)
    out.push(p)
  }
  visit(pattern)
  return out
}

const SAFE = /[A-Za-z0-9_\-.~%]/

/** The index of the `]` closing the bracket class opened at `open`, or -1 (POSIX `[:x:]` inside). */
function classEnd(seg: string, open: number): number {
  let j = open + 1
  if (seg[j] === '!' || seg[j] === '^') j++
  if (seg[j] === ']') j++
  while (j < seg.length) {
    if (seg.startsWith('[:', j)) {
      const end = seg.indexOf(':]', j + 2)
      if (end === -1) return -1
      j = end + 2
    } else if (seg[j] === '\\') j += 2
    else if (seg[j] === ']') return j
    else j++
  }
  return -1
}

/**
 * A segment rewritten so picomatch sees only literals (escaped), `*`, `?` and bracket classes;
 * and the number of `*` runs in it.
 */
export function safeSegment(seg: string): { source: string; stars: number } {
  let out = ''
  let stars = 0
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i] ?? ''
    if (c === '\\') {
      i++
      const next = seg[i]
      out += next === undefined ? '\\\\' : `\\${next}`
    } else if (c === '*') {
      while (seg[i + 1] === '*') i++
      out += '*'
      stars++
    } else if (c === '?') out += '?'
    else if (c === '[') {
      const close = classEnd(seg, i)
      if (close === -1) {
        out += '\\['
        continue
      }
      let body = seg.slice(i + 1, close)
      let negate = false
      if (body.startsWith('!') || body.startsWith('^')) {
        negate = true
        body = body.slice(1)
      }
      // Inside a class only ranges, POSIX classes and literal characters mean anything.
      body = body.replace(
        /\[:(\w+):\]|(\\.)|([^\w\s-])/g,
        (m, posix: string | undefined, esc: string | undefined, other: string | undefined) => {
          if (posix !== undefined || esc !== undefined) return m
          return `\\${other ?? ''}`
        },
      )
      out += `[${negate ? '^' : ''}${body}]`
      i = close
    } else out += SAFE.test(c) ? c : `\\${c}`
  }
  return { source: out, stars }
}

type Token = { globstar: true } | { globstar: false; re: RegExp }

const PICO = {
  dot: true,
  nobrace: true,
  noextglob: true,
  nonegate: true,
  noquantifiers: true,
  strictSlashes: true,
} as const

/** The segment tokens of one brace-free pattern. */
function tokens(pattern: string, whole: string): Token[] {
  const segs = pattern
    .replace(/^(\.\/)+/, '')
    .split('/')
    .filter((s, i, all) => s !== '' || i === all.length - 1)
  if (segs.length > MAX_GLOB_SEGMENTS)
    throw new GlobError(`the glob "${whole}" has more than ${MAX_GLOB_SEGMENTS} path segments`)
  return segs.map((seg): Token => {
    if (seg === '**') return { globstar: true }
    if (seg === '') return { globstar: false, re: /^$/ } // a trailing `/`: no file path ends there
    const { source, stars } = safeSegment(seg)
    if (stars > MAX_STARS_PER_SEGMENT) {
      throw new GlobError(
        `the glob "${whole}" has ${stars} "*" wildcards in the segment "${seg}"; at most ${MAX_STARS_PER_SEGMENT} per path segment are allowed (more can make matching very slow): narrow the pattern`,
      )
    }
    try {
      return { globstar: false, re: picomatch!.makeRe(source, PICO) }
    } catch (e) {
      throw new GlobError(`invalid glob "${whole}": ${e instanceof Error ? e.message : String(e)}`)
    }
  })
}

/** Match path segments against tokens, segment by segment (a set of NFA states; no backtracking). */
function matchTokens(toks: readonly Token[], parts: readonly string[]): boolean {
  const close = (states: Set<number>): Set<number> => {
    for (const s of [...states]) {
      for (let t = s; t < toks.length && toks[t]?.globstar; t++) states.add(t + 1)
    }
    return states
  }
  let states = close(new Set([0]))
  for (const part of parts) {
    const next = new Set<number>()
    for (const s of states) {
      const tok = toks[s]
      if (!tok) continue
      if (tok.globstar) next.add(s)
      else if (tok.re.test(part)) next.add(s + 1)
    }
    if (next.size === 0) return false
    states = close(next)
  }
  return states.has(toks.length)
}

/** Compiled globs kept for the next call with the same pattern (a model repeats its patterns). */
const COMPILED_KEPT = 64
const compiled = new Map<string, GlobMatcher>()

/** Compile `pattern` (braces expanded); throws a GlobError for a pattern past the caps. */
export async function compileGlob(pattern: string): Promise<GlobMatcher> {
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobError(`the glob is longer than ${MAX_GLOB_LENGTH} characters`)
  const kept = compiled.get(pattern)
  if (kept) {
    // The most recently used goes last: the first is the one to drop.
    compiled.delete(pattern)
    compiled.set(pattern, kept)
    return kept
  }
  picomatch ??= (await import('picomatch')).default
  const alternatives = expandBraces(pattern).map((alt) => tokens(alt, pattern))
  // Stateless (the segment expressions have no `g` flag), so one matcher serves every call.
  const matcher: GlobMatcher = {
    test(path: string): boolean {
      const parts = path.split('/')
      return alternatives.some((toks) => matchTokens(toks, parts))
    },
  }
  compiled.set(pattern, matcher)
  if (compiled.size > COMPILED_KEPT) compiled.delete(compiled.keys().next().value!)
  return matcher
}

/** True when the glob names a path (contains `/`), false when it names a basename only. */
export function globHasSlash(pattern: string): boolean {
  return pattern.replace(/^(\.\/)+/, '').includes('/')
}
