/**
 * Exact-string replacement and the unified-diff-style summary the Edit tool returns: one hunk
 * per group of replaced lines (`@@ -old,count +new,count @@`, `-` and `+` lines).
 */

/** Start offsets of the non-overlapping occurrences of `needle` in `text`, left to right. */
export function findOccurrences(text: string, needle: string): number[] {
  const at: number[] = []
  if (needle === '') return at
  let i = text.indexOf(needle)
  while (i !== -1) {
    at.push(i)
    i = text.indexOf(needle, i + needle.length)
  }
  return at
}

/** `text` with `needle` replaced by `replacement` at each offset of `at` (no `$` patterns). */
export function replaceAt(text: string, needle: string, replacement: string, at: readonly number[]): string {
  let out = ''
  let last = 0
  for (const i of at) {
    out += text.slice(last, i) + replacement
    last = i + needle.length
  }
  return out + text.slice(last)
}

const countLines = (chunk: string): number => chunk.split('\n').length
const lineOf = (text: string, offset: number): number => {
  let n = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++
  return n
}

/** Most hunks and lines shown in a summary; the rest is elided with a note. */
const MAX_HUNKS = 20
const MAX_DIFF_LINES = 400

/**
 * A unified-diff-ish summary of replacing `needle` by `replacement` at offsets `at` of
 * `original`, naming the file `name`. Replacements on the same or touching lines share a hunk.
 */
export function replacementDiff(
  name: string,
  original: string,
  needle: string,
  replacement: string,
  at: readonly number[],
): string {
  type Group = { start: number; end: number; offsets: number[] }
  const groups: Group[] = []
  for (const i of at) {
    const start = original.lastIndexOf('\n', i - 1) + 1
    const nl = original.indexOf('\n', i + needle.length)
    const end = nl === -1 ? original.length : nl
    const prev = groups[groups.length - 1]
    if (prev && start <= prev.end) {
      prev.end = Math.max(prev.end, end)
      prev.offsets.push(i)
    } else groups.push({ start, end, offsets: [i] })
  }
  const out = [`--- a/${name}`, `+++ b/${name}`]
  let delta = 0
  let shown = 0
  for (const g of groups) {
    const oldChunk = original.slice(g.start, g.end)
    const newChunk = replaceAt(
      oldChunk,
      needle,
      replacement,
      g.offsets.map((o) => o - g.start),
    )
    const oldLine = lineOf(original, g.start)
    const oldCount = countLines(oldChunk)
    const newCount = countLines(newChunk)
    if (shown < MAX_HUNKS && out.length < MAX_DIFF_LINES) {
      out.push(`@@ -${oldLine},${oldCount} +${oldLine + delta},${newCount} @@`)
      for (const l of oldChunk.split('\n')) out.push(`-${l}`)
      for (const l of newChunk.split('\n')) out.push(`+${l}`)
      shown++
    }
    delta += newCount - oldCount
  }
  if (shown < groups.length || out.length > MAX_DIFF_LINES) {
    const lines = out.slice(0, MAX_DIFF_LINES)
    lines.push(`… (${groups.length} hunks in all; summary truncated)`)
    return lines.join('\n')
  }
  return out.join('\n')
}
