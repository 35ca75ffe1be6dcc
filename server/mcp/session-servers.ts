/**
 * The MCP servers of one session: all connected in parallel (each within the timeout; one that
 * fails is reported and left out, the others serve), their tools as extra tools of the session
 * (`mcp__<server>__<tool>`, contract: the server's JSON schema, rule `ask`), kept current when
 * a server says its list changed, and every server closed by `close()`.
 */
import type { Logger } from '../log.ts'
import type { Tool, ToolContract } from '../tools/types.ts'
import { connectTimeoutMs, type McpServerConfig } from './config.ts'
import { serverSlug, toolName, unique } from './names.ts'
import { McpServerConnection, type McpToolInfo } from './server-connection.ts'

export interface McpServerStatus {
  name: string
  status: 'connected' | 'failed'
  /** The tool names the agent sees (connected servers). */
  tools?: string[]
  error?: string
}

export interface SessionMcpOptions {
  cwd: string
  logger: Logger
  version: string
  timeoutMs?: number
}

export class SessionMcp {
  readonly #conns: { slug: string; conn: McpServerConnection }[] = []
  #status: McpServerStatus[] = []
  #tools = new Map<string, Tool>()
  #closed = false
  /** Called when the tool set changes (a server's list changed, or a server went away). */
  onToolsChanged: ((tools: Map<string, Tool>) => void) | undefined

  private constructor() {}

  /** Connect every server (in parallel); never throws: failures are in `status`. */
  static async connect(servers: readonly McpServerConfig[], o: SessionMcpOptions): Promise<SessionMcp> {
    const mcp = new SessionMcp()
    const slugs = new Set<string>()
    const named = servers.map((cfg) => {
      const slug = unique(serverSlug(cfg.name), slugs)
      slugs.add(slug)
      return { cfg, slug }
    })
    const timeoutMs = o.timeoutMs ?? connectTimeoutMs()
    const results = await Promise.allSettled(
      named.map(({ cfg }) =>
        McpServerConnection.open(cfg, {
          cwd: o.cwd,
          logger: o.logger,
          timeoutMs,
          version: o.version,
          onToolsChanged: () => mcp.#rebuild(true),
          onExit: () => mcp.#rebuild(true),
        }),
      ),
    )
    results.forEach((r, i) => {
      const { cfg, slug } = named[i]!
      if (r.status === 'fulfilled') {
        mcp.#conns.push({ slug, conn: r.value })
        return
      }
      const error = r.reason instanceof Error ? r.reason.message : String(r.reason)
      o.logger.warn(`mcp ${cfg.name}: not connected: ${error}`)
      mcp.#status.push({ name: cfg.name, status: 'failed', error })
    })
    mcp.#rebuild(false)
    return mcp
  }

  /** One entry per server the client passed: connected (with its tools) or failed (why). */
  get status(): readonly McpServerStatus[] {
    return this.#status
  }

  /** The session's MCP tools by agent-facing name. */
  get tools(): Map<string, Tool> {
    return new Map(this.#tools)
  }

  /** Close every server and end its process. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#tools.clear()
    await Promise.all(this.#conns.map((c) => c.conn.close()))
  }

  #rebuild(notify: boolean): void {
    if (this.#closed) return
    const tools = new Map<string, Tool>()
    const failed = this.#status.filter((s) => s.status === 'failed')
    const connected: McpServerStatus[] = []
    for (const { slug, conn } of this.#conns) {
      const names: string[] = []
      // A server that went away offers nothing more; its calls would only fail.
      if (!conn.gone) {
        for (const info of conn.tools) {
          const name = unique(toolName(slug, info.name), tools)
          tools.set(name, mcpTool(name, conn, info))
          names.push(name)
        }
      }
      connected.push({ name: conn.name, status: 'connected', tools: names, ...(conn.gone ? { error: conn.gone } : {}) })
    }
    this.#status = [...connected, ...failed]
    this.#tools = tools
    if (notify) this.onToolsChanged?.(this.tools)
  }
}

function mcpTool(name: string, conn: McpServerConnection, info: McpToolInfo): Tool<Record<string, unknown>> {
  const contract: ToolContract = {
    description: `${info.description} (MCP server "${conn.name}", tool "${info.name}")`,
    inputSchema: info.inputSchema,
    permission: 'ask',
    parse: (raw) => parseArgs(raw ?? {}, info.inputSchema),
  }
  return {
    name,
    contract,
    permissionKey: (args) => stableJson(args),
    run: (args, ctx) => conn.call(info.name, args, ctx.signal, (line) => ctx.progress({ stdout: line })),
  }
}

/**
 * A light check before the call (the server validates its own input): the arguments are an
 * object and carry the schema's required properties.
 */
function parseArgs(
  raw: unknown,
  schema: Record<string, unknown>,
): { ok: true; args: unknown } | { ok: false; error: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, error: 'arguments must be a JSON object' }
  const required = Array.isArray(schema.required)
    ? schema.required.filter((k): k is string => typeof k === 'string')
    : []
  const missing = required.filter((k) => !Object.hasOwn(raw, k))
  if (missing.length) return { ok: false, error: `missing required ${missing.map((k) => `"${k}"`).join(', ')}` }
  return { ok: true, args: raw }
}

/** JSON with object keys sorted: the same arguments give the same permission key. */
function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  )
}
