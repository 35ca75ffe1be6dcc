/**
 * The MCP servers an ACP client passes in `session/new|load|resume` (`McpServer` of the ACP v1
 * schema): stdio (no `type`, or `type: "stdio"`), `http` (Streamable HTTP) and `sse`.
 * `{name, value}` lists become records. Timeouts: `CHIMERA_MCP_TIMEOUT_MS` bounds start +
 * initialize + the tool list of one server (default 15 s); a tool call may run 10 minutes,
 * longer while the server reports progress.
 */
export interface NameValue {
  name: string
  value: string
}

export type McpServerConfig =
  | { type?: 'stdio'; name: string; command: string; args: string[]; env: NameValue[] }
  | { type: 'http' | 'sse'; name: string; url: string; headers: NameValue[] }

export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000
export const CALL_TIMEOUT_MS = 10 * 60_000

/** The connect timeout from the environment (a positive integer of ms), else the default. */
export function connectTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.CHIMERA_MCP_TIMEOUT_MS)
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_CONNECT_TIMEOUT_MS
}

export const record = (list: readonly NameValue[] | undefined): Record<string, string> =>
  Object.fromEntries((list ?? []).map((e) => [e.name, e.value]))

export const isStdio = (c: McpServerConfig): c is Extract<McpServerConfig, { command: string }> =>
  c.type === undefined || c.type === 'stdio'
