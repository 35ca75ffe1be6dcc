/**
 * Tool names of MCP tools as the agent sees them: `mcp__<server>__<tool>`. Providers accept
 * `^[A-Za-z0-9_-]{1,64}$`, so other characters become `_`; the server part has no `__` (runs of
 * `_` collapse), which keeps the prefix unambiguous for allow-list patterns
 * (core/tool-patterns.ts); a name over 64 characters is cut and ends with a short hash of the
 * whole; duplicates (two servers or tools that sanitise alike) get a numeric suffix. The
 * prefix keeps every MCP tool apart from the built-ins.
 */
import { crypto } from '../platform/builtins.ts'

export const MAX_TOOL_NAME = 64

/** A server's name as the middle part of its tools' names. */
export function serverSlug(name: string): string {
  const s = name.replace(/[^A-Za-z0-9-]+/g, '_').replace(/^_+|_+$/g, '')
  return (s || 'server').slice(0, 24)
}

/** `mcp__<slug>__<tool>`, sanitised and at most 64 characters. */
export function toolName(slug: string, tool: string): string {
  const t = tool.replace(/[^A-Za-z0-9_-]/g, '_') || 'tool'
  const full = `mcp__${slug}__${t}`
  if (full.length <= MAX_TOOL_NAME) return full
  const hash = crypto().createHash('sha256').update(tool).digest('hex').slice(0, 8)
  return `${full.slice(0, MAX_TOOL_NAME - 9)}_${hash}`
}

/** `base`, or `base_2`, `base_3`… — the first not in `taken` (kept within 64 characters). */
export function unique(base: string, taken: { has(name: string): boolean }): string {
  if (!taken.has(base)) return base
  for (let i = 2; ; i++) {
    const suffix = `_${i}`
    const name = base.slice(0, MAX_TOOL_NAME - suffix.length) + suffix
    if (!taken.has(name)) return name
  }
}
