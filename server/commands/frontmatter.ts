/**
 * The YAML frontmatter of a markdown file (custom commands, agent definitions): an optional
 * `---` block at the top, parsed as YAML (aliases bounded), and the body after it. A file without
 * the block is all body.
 */
import { parse as parseYaml } from 'yaml'

/** The frontmatter mapping (empty when absent) and the body, or why the block is malformed. */
export function splitFrontmatter(text: string): { front: Record<string, unknown>; body: string } | string {
  let body = text.replace(/^\uFEFF/, '')
  let front: unknown = null
  const open = /^---[ \t]*\r?\n/.exec(body)
  if (open) {
    const rest = body.slice(open[0].length)
    const close = /^---[ \t]*(?:\r?\n|$)/m.exec(rest)
    if (!close) return 'frontmatter is not closed (no second --- line)'
    try {
      front = parseYaml(rest.slice(0, close.index), { maxAliasCount: 50, prettyErrors: false })
    } catch (err) {
      return `frontmatter is not valid YAML: ${(err as Error).message.split('\n')[0]}`
    }
    body = rest.slice(close.index + close[0].length)
  }
  if (front !== null && front !== undefined && (typeof front !== 'object' || Array.isArray(front)))
    return 'frontmatter must be a mapping'
  return { front: (front ?? {}) as Record<string, unknown>, body }
}
