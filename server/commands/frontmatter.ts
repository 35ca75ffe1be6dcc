/**
 * The YAML frontmatter of a markdown file (custom commands, agent definitions): an optional
 * `---` block at the top, parsed as YAML (aliases bounded), and the body after it. A file without
 * the block is all body.
 *
 * The YAML parser (~110 KiB) is a chunk of its own, off the start-up path: `loadFrontmatterParser()`
 * loads it, and a block met before it is loaded throws `FrontmatterParserNotLoaded`. The callers
 * load it first: the session manager when a session starts in a directory that has command files,
 * or right after otherwise (server/commands/custom-commands.ts `prepare`), the HTTP routes and
 * `--agent` before they read a file (docs/decisions/0380-start-up-without-yaml-and-tools.md).
 */
import type { parse as YamlParse } from 'yaml'

let parseYaml: typeof YamlParse | undefined
let loading: Promise<void> | undefined

/** Loads the YAML parser (once); resolves when `splitFrontmatter` can parse a block. */
export function loadFrontmatterParser(): Promise<void> {
  loading ??= import('yaml').then(
    (m) => {
      // A CommonJS package: bundled, its dynamic import has only `default` (its exports); Node's has both.
      parseYaml = m.default.parse
    },
    (err: unknown) => {
      loading = undefined
      throw err
    },
  )
  return loading
}

let soon: ReturnType<typeof setTimeout> | undefined
/** How long `loadFrontmatterParserSoon` waits. */
const LOAD_SOON_MS = 20

/**
 * Loads the YAML parser in the background once the work in hand has had its turn: after a
 * timer, not at once, because on Node 22+ a module import can finish within the same
 * turn of the event loop and its evaluation (~4 ms) then runs before the answer it was
 * meant to follow (the `session/new` or `get_state` this session was created for).
 */
export function loadFrontmatterParserSoon(): void {
  if (parseYaml !== undefined || loading !== undefined || soon !== undefined) return
  soon = setTimeout(() => {
    // A failed load is tried again by the next call (as the explicit loaders do).
    void loadFrontmatterParser().catch(() => (soon = undefined))
  }, LOAD_SOON_MS)
  soon.unref()
}

/** True once `loadFrontmatterParser()` has resolved. */
export const frontmatterParserLoaded = (): boolean => parseYaml !== undefined

/** A frontmatter block met before the YAML parser was loaded. */
export class FrontmatterParserNotLoaded extends Error {
  override name = 'FrontmatterParserNotLoaded'
  constructor() {
    super('the YAML parser is still loading; try again')
  }
}

/** The frontmatter mapping (empty when absent) and the body, or why the block is malformed. */
export function splitFrontmatter(text: string): { front: Record<string, unknown>; body: string } | string {
  let body = text.replace(/^\uFEFF/, '')
  let front: unknown = null
  const open = /^---[ \t]*\r?\n/.exec(body)
  if (open) {
    const rest = body.slice(open[0].length)
    const close = /^---[ \t]*(?:\r?\n|$)/m.exec(rest)
    if (!close) return 'frontmatter is not closed (no second --- line)'
    if (!parseYaml) throw new FrontmatterParserNotLoaded()
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
