/**
 * Allow-list entries for tools that are not built-ins. MCP tools are named
 * `mcp__<server>__<tool>` (server/mcp/names.ts), so `--allowed-tools` may name them exactly or
 * by pattern: `mcp__*` (every MCP tool), `mcp__<server>` or `mcp__<server>__*` (every tool of
 * one server). Built-in names stay exact. Permission rules (`--permission`, the project config's
 * `permission`) may use the same entries; the most specific one wins.
 */

const PATTERN = /^mcp__(\*|[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*(?:__(?:\*|[A-Za-z0-9_-]+))?)$/

/** True when `entry` is an allow-list entry for extra tools (an MCP name or pattern). */
export function isToolPattern(entry: string): boolean {
  return PATTERN.test(entry)
}

/** True when the allow-list (absent: everything) lets tool `name` be offered. */
export function toolAllowed(name: string, allowed: readonly string[] | undefined): boolean {
  if (!allowed) return true
  for (const entry of allowed) {
    if (entry === name) return true
    if (!entry.startsWith('mcp__') || !name.startsWith('mcp__')) continue
    if (entry === 'mcp__*') return true
    const server = entry.endsWith('__*') ? entry.slice(0, -3) : entry
    if (!server.slice(5).includes('__') && name.startsWith(`${server}__`)) return true
  }
  return false
}

/**
 * The rule for tool `name`: its exact entry, else (for MCP tools) `mcp__<server>__*` or
 * `mcp__<server>`, else `mcp__*`; undefined when none names it.
 */
export function ruleFor<R>(rules: ReadonlyMap<string, R>, name: string): R | undefined {
  const exact = rules.get(name)
  if (exact !== undefined || !name.startsWith('mcp__')) return exact
  const server = name.slice(0, name.indexOf('__', 5))
  if (server.length > 5) {
    const byServer = rules.get(`${server}__*`) ?? rules.get(server)
    if (byServer !== undefined) return byServer
  }
  return rules.get('mcp__*')
}
