/**
 * How an ACP v1 session gets the MCP servers its client passed (docs/decisions/0150): connected
 * before the new/load/resume response (in parallel, each within the timeout), their tools
 * added to the session; a server that fails does not fail the session: the response's
 * `_meta["chimera/mcp"]` lists every server with its status and tools, and a warning
 * `agent_message_chunk` after the response says which did not start and why. The MCP client
 * (and the SDK) are imported only when a client passes servers.
 */
import type { Logger } from '../../log.ts'
import type { McpServerConfig } from '../../mcp/config.ts'
import type { SessionMcp } from '../../mcp/session-servers.ts'
import type { V1Update } from './event-map.ts'

export type { SessionMcp }

/** Connect the servers for a session (nothing when none were passed). */
export async function connectMcp(
  servers: readonly McpServerConfig[] | undefined,
  o: { cwd: string; logger: Logger; version: string },
): Promise<SessionMcp | undefined> {
  if (!servers?.length) return undefined
  const { SessionMcp } = await import('../../mcp/session-servers.ts')
  return SessionMcp.connect(servers, o)
}

/** `_meta` of the new/load/resume response. */
export function mcpMeta(mcp: SessionMcp | undefined): { _meta?: Record<string, unknown> } {
  return mcp ? { _meta: { 'chimera/mcp': { servers: mcp.status } } } : {}
}

/** The warning sent after the response when some server did not connect. */
export function mcpNotice(mcp: SessionMcp | undefined): V1Update | undefined {
  const failed = mcp?.status.filter((s) => s.status === 'failed') ?? []
  if (!failed.length) return undefined
  const lines = failed.map((s) => `MCP server "${s.name}" is not available: ${s.error ?? 'failed'}`)
  return {
    sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: `\n[warning] ${lines.join('\n[warning] ')}\n` },
    _meta: { 'chimera/notice': 'warning', 'chimera/mcp': { servers: mcp!.status } },
  }
}
