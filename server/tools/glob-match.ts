/**
 * Glob patterns compiled to regular expressions, matched against `/`-separated relative paths:
 * `*` and `?` stay within one path segment, `**` as a whole segment spans any number of
 * segments (none included), `[abc]` / `[!abc]` are character classes, `{a,b}` alternatives
 * (nested allowed), `\x` escapes. `*` also matches names starting with a dot.
 */

const MAX_EXPANSIONS = 1024

/** Expand the `{a,b}` alternatives of `pattern` into plain patterns (at most 1024). */
export function expandBraces(pattern: string): string[] {
  let depth = 0
  let open = -1
  const commas: number[] = []
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
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
      if (depth === 0) {
        if (commas.length === 0) continue
        const head = pattern.slice(0, open)
        const tail = pattern.slice(i + 1)
        const bounds = [open, ...commas, i]
        const out: string[] = []
        for (let k = 0; k + 1 < bounds.length; k++) {
          const alt = pattern.slice((bounds[k] ?? 0) + 1, bounds[k + 1])
          for (const e of expandBraces(head + alt + tail)) {
            out.push(e)
            if (out.length >= MAX_EXPANSIONS) return out
          }
        }
        return out
      }
    } else if (c === ',' && depth === 1) commas.push(i)
  }
  return [pattern]
}

const escapeRe = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/** The regex source of one path segment without `**`. */
function segmentSource(seg: string): string {
  let out = ''
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i] ?? ''
    if (c === '\\') {
      i++
      out += escapeRe(seg[i] ?? '\\')
    } else if (c === '*') {
      while (seg[i + 1] === '*') i++
      out += '[^/]*'
    } else if (c === '?') out += '[^/]'
    else if (c === '[') {
      const close = seg.indexOf(']', i + 2)
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
      out += `[${negate ? '^/' : ''}${body.replace(/[\\\]]/g, '\\$&').replace(/^\^/, '\\^')}]`
      i = close
    } else out += escapeRe(c)
  }
  return out
}

/** The regex source for a brace-free pattern. */
function patternSource(pattern: string): string {
  const segs = pattern.replace(/^(\.\/)+/, '').split('/').filter((s, i, all) => s !== '' || i === all.length - 1)
  let out = ''
  segs.forEach((seg, i) => {
    const last = i === segs.length - 1
    if (seg === '**') {
      if (!last) out += '(?:.*/)?'
      else if (out === '') out += '.*'
      else if (out.endsWith('/')) out = `${out.slice(0, -1)}(?:/.*)?`
      else out += '.*'
      return
    }
    out += segmentSource(seg) + (last ? '' : '/')
  })
  return out
}

/** Compile `pattern` (braces expanded) to an anchored RegExp over relative `/` paths. */
export function compileGlob(pattern: string): RegExp {
  const alts = expandBraces(pattern).map(patternSource)
  return new RegExp(`^(?:${alts.join('|')})$`)
}

/** True when the glob names a path (contains `/`), false when it names a basename only. */
export function globHasSlash(pattern: string): boolean {
  return pattern.replace(/^(\.\/)+/, '').includes('/')
}
