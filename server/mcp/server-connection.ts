/**
 * One MCP server of one session, through the official SDK (`@modelcontextprotocol/sdk`, loaded
 * on first use): start it (stdio: spawn `command args` in the session's cwd with the given env;
 * http: Streamable HTTP with the given headers), initialize, list its tools (every page,
 * bounded), call them, follow `notifications/tools/list_changed`, and close it (the process
 * is ended: stdin, SIGTERM, SIGKILL). `open` fails — and leaves nothing running — when the
 * server cannot start, does not answer within the timeout, or cannot list its tools.
 * A server that exits later makes its calls fail with a clear error; the turn goes on.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { Logger } from '../log.ts'
import type { ToolOutcome } from '../tools/types.ts'
import { CALL_TIMEOUT_MS, isStdio, record, type McpServerConfig } from './config.ts'
import { release, signalGroup, supervise } from '../platform/supervisor.ts'
import { toOutcome } from './result.ts'
import { settleWithin } from '../settle-within.ts'

/** At most this many tools per server, and this many list pages. */
const MAX_TOOLS = 512
const MAX_PAGES = 32
/** A tool whose input schema is larger than this (as JSON) is left out. */
const MAX_SCHEMA_CHARS = 64 * 1024
const MAX_DESCRIPTION = 4000
/** Transport errors (garbage on stdout…) logged per server. */
const MAX_LOGGED_ERRORS = 20
/** Lines of a server's stderr longer than this are cut in the log. */
const MAX_LOG_LINE = 1000
/**
 * A burst of `tools/list_changed` is followed by at most this many listings in a row; a change
 * announced after them is listed once {@link RELIST_PAUSE_MS} later. A server that announces a
 * change at every listing costs a few listings a second, not a busy loop.
 */
const MAX_RELISTS = 3
const RELIST_PAUSE_MS = 1000
/** How long a call's result waits for a tool-list refresh in progress (it then returns anyway). */
const REFRESH_WAIT_MS = 2000

export interface McpToolInfo {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

export interface OpenOptions {
  cwd: string
  logger: Logger
  timeoutMs: number
  version: string
  /** The server's tool list changed (after `notifications/tools/list_changed`). */
  onToolsChanged?: () => void
  /** The server went away (exited, or the connection dropped) without `close()`. */
  onExit?: () => void
}

export class McpServerConnection {
  readonly name: string
  readonly #client: Client
  readonly #transport: Transport
  readonly #o: OpenOptions
  #tools: McpToolInfo[] = []
  #closed = false
  #gone: string | undefined
  #refreshing: Promise<void> | undefined
  #again = false
  #pause: NodeJS.Timeout | undefined

  private constructor(name: string, client: Client, transport: Transport, o: OpenOptions) {
    this.name = name
    this.#client = client
    this.#transport = transport
    this.#o = o
  }

  /** Start, initialize and list tools within `timeoutMs`; throws (nothing left running) when that fails. */
  static async open(cfg: McpServerConfig, o: OpenOptions): Promise<McpServerConnection> {
    const [{ Client }, { ToolListChangedNotificationSchema }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ])
    const transport = await makeTransport(cfg, o)
    const client = new Client({ name: 'chimera', version: o.version }, { capabilities: {} })
    const conn = new McpServerConnection(cfg.name, client, transport, o)
    // Lines that are not JSON-RPC (a server that prints to stdout) are dropped and logged, a few.
    let errors = 0
    client.onerror = (err) => {
      if (++errors <= MAX_LOGGED_ERRORS) o.logger.warn(`mcp ${cfg.name}: ${err.message.slice(0, 300)}`)
      if (errors === MAX_LOGGED_ERRORS) o.logger.warn(`mcp ${cfg.name}: further errors of this server are not logged`)
    }
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${o.timeoutMs} ms`)), o.timeoutMs)
    })
    try {
      await Promise.race([client.connect(transport, { timeout: o.timeoutMs }), deadline])
      const pid = (transport as { pid?: number | null }).pid
      if (typeof pid === 'number') supervise(pid, 'mcp')
      client.onclose = () => conn.#exited(pid ?? undefined)
      await Promise.race([conn.#list(), deadline])
    } catch (err) {
      // A server that failed to start or answer gets no polite shutdown: it is killed now.
      const pid = (transport as { pid?: number | null }).pid
      if (typeof pid === 'number') signalGroup(pid, 'SIGKILL') // its process group (stdio-transport.ts)
      await conn.close()
      throw err
    } finally {
      clearTimeout(timer)
    }
    if (client.getServerCapabilities()?.tools?.listChanged) {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => conn.#refresh())
    }
    return conn
  }

  get tools(): readonly McpToolInfo[] {
    return this.#tools
  }

  /** Why calls fail now (the server exited), or undefined while it runs. */
  get gone(): string | undefined {
    return this.#gone
  }

  /** Call a tool; the server's progress notifications become progress lines (`onProgress`). */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress?: (line: string) => void,
  ): Promise<ToolOutcome> {
    if (this.#gone) return { ok: false, error: `MCP server "${this.name}" is not running: ${this.#gone}` }
    const onprogress = onProgress
      ? (p: { progress: number; total?: number; message?: string }) =>
          onProgress(
            `${p.message ?? 'progress'} (${p.progress}${p.total !== undefined ? `/${p.total}` : ''})\n`.slice(0, 1000),
          )
      : undefined
    try {
      const result = await this.#client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        ...(onprogress ? { onprogress } : {}),
      })
      // A list_changed the server sent before this result is applied before the model's next
      // step, if the listing comes soon: never longer than REFRESH_WAIT_MS, never past a cancel.
      if (this.#refreshing) await settleWithin(this.#refreshing, REFRESH_WAIT_MS, { signal })
      return toOutcome(result)
    } catch (err) {
      if (signal.aborted) return { ok: false, error: 'cancelled' }
      const why = this.#gone
        ? `the server exited during the call (${this.#gone})`
        : err instanceof Error
          ? err.message
          : String(err)
      return { ok: false, error: `MCP server "${this.name}", tool "${tool}": ${why}` }
    }
  }

  /** Close the connection and end the server process (idempotent). */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#pause)
    this.#gone ??= 'closed'
    const pid = (this.#transport as { pid?: number | null }).pid
    try {
      await this.#client.close()
    } catch (err) {
      this.#o.logger.warn(`mcp ${this.name}: close failed`, err)
    }
    if (typeof pid === 'number') release(pid)
  }

  #exited(pid: number | undefined): void {
    if (pid !== undefined) release(pid)
    if (this.#closed) return
    this.#gone = 'it exited or closed the connection'
    this.#o.logger.warn(`mcp ${this.name}: the server went away`)
    this.#o.onExit?.()
  }

  async #list(): Promise<void> {
    const tools: McpToolInfo[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.#client.listTools(cursor ? { cursor } : undefined, { timeout: this.#o.timeoutMs })
      for (const t of r.tools) {
        if (tools.length >= MAX_TOOLS) break
        const schema = t.inputSchema as Record<string, unknown>
        if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) {
          this.#o.logger.warn(
            `mcp ${this.name}: tool "${t.name}" left out: its input schema is over ${MAX_SCHEMA_CHARS} characters`,
          )
          continue
        }
        tools.push({
          name: t.name,
          description: (t.description ?? t.title ?? t.name).slice(0, MAX_DESCRIPTION),
          inputSchema: schema,
        })
      }
      cursor = r.nextCursor
      if (!cursor || tools.length >= MAX_TOOLS) break
    }
    this.#tools = tools
  }

  /** Re-list after `tools/list_changed` (one listing at a time; a change meanwhile lists again). */
  #refresh(): void {
    if (this.#refreshing) {
      this.#again = true
      return
    }
    if (this.#pause || this.#closed) {
      this.#again = true
      return
    }
    this.#refreshing = (async () => {
      let n = 0
      do {
        this.#again = false
        try {
          await this.#list()
          this.#o.onToolsChanged?.()
        } catch (err) {
          this.#o.logger.warn(`mcp ${this.name}: the tool list could not be refreshed`, err)
        }
      } while (this.#again && !this.#closed && ++n < MAX_RELISTS)
    })().finally(() => {
      this.#refreshing = undefined
      if (!this.#again || this.#closed) return
      this.#again = false
      this.#pause = setTimeout(() => {
        this.#pause = undefined
        this.#refresh()
      }, RELIST_PAUSE_MS)
      this.#pause.unref()
    })
  }
}

async function makeTransport(cfg: McpServerConfig, o: OpenOptions): Promise<Transport> {
  if (isStdio(cfg)) {
    const { GroupStdioTransport } = await import('./stdio-transport.ts')
    const t = new GroupStdioTransport({ command: cfg.command, args: cfg.args, env: record(cfg.env), cwd: o.cwd })
    forwardStderr(t.stderr, cfg.name, o.logger)
    return t
  }
  if (cfg.type === 'http') {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    return new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers: record(cfg.headers) } })
  }
  throw new Error(`MCP over ${cfg.type} is not supported (this agent advertises mcpCapabilities.${cfg.type}: false)`)
}

/** A server's stderr goes to our log, a line at a time, prefixed with its name. */
function forwardStderr(stream: NodeJS.ReadableStream | null, name: string, logger: Logger): void {
  if (!stream) return
  let held = ''
  stream.setEncoding?.('utf8')
  stream.on('data', (chunk: string | Buffer) => {
    held += String(chunk)
    let nl: number
    while ((nl = held.indexOf('\n')) >= 0) {
      const line = held.slice(0, nl).replace(/\r$/, '')
      held = held.slice(nl + 1)
      if (line) logger.info(`mcp ${name} stderr: ${line.slice(0, MAX_LOG_LINE)}`)
    }
    if (held.length > MAX_LOG_LINE) {
      logger.info(`mcp ${name} stderr: ${held.slice(0, MAX_LOG_LINE)}`)
      held = ''
    }
  })
}
