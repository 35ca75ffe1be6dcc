/**
 * `/acp`: ACP v1 over the network, beside stdio (docs/remote-acp.md). The wire is the official
 * SDK's own server transport (`@agentclientprotocol/sdk/experimental/server`: Streamable HTTP,
 * POST in and SSE out with `Acp-Connection-Id` / `Acp-Session-Id`, and WebSocket, one message
 * per text frame), so its client transports interoperate by construction; behind it, each
 * connection is served by our ACP engine (serveAcp over a message channel,
 * server/acp/serve-acp-channel.ts) on the process's one session manager: a session is the same
 * on every wire (docs/decisions/0320-acp-over-the-network.md).
 *
 * Around the SDK, the guards of every route, and the limits it leaves to its embedder:
 * - Host (DNS rebinding) and Origin (CORS allow-list; on WebSocket too, which CORS does not cover);
 * - bearer auth: the master token, or a session token, which confines the connection to its own
 *   session (anything else is answered `-32000 Authentication required`); every later request
 *   of a connection must present the same principal, and a connection id is not a credential;
 * - a cap on open ACP connections (HTTP + WS), a message size limit (POST body, WS frame),
 *   idle HTTP connections with no open stream closed, WebSocket pings;
 * - output a client does not read: the SDK holds at most `maxBufferedBytes` per connection and
 *   closes one whose client reads nothing for `maxOutputStallMs`; our engine waits meanwhile.
 * A dropped connection leaves its sessions running (nothing is denied for want of a client):
 * `initialize` + `session/load` on a new connection replays the history.
 *
 * The SDK's server and the WebSocket library load with the first `/acp` request or upgrade, so
 * a server that serves none starts without them (docs/decisions/0380-start-up-without-yaml-and-tools.md).
 */
import type { AcpSeedMethod } from '../../generated/acp/seed.gen.ts'
import type { AcpV1Method } from '../../generated/acp/v1-methods.gen.ts'
import type { BridgeStatus } from '../../generated/schemas.gen.ts'
import { STATUS_CODES, type IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { AcpServer } from '@agentclientprotocol/sdk/experimental/server'
import type { WebSocket, WebSocketServer } from 'ws'
import { unauthorized } from '../../client/wire/http/auth.ts'
import { readJsonBody } from '../../client/wire/http/body.ts'
import type { SessionManager } from '../core/manager.ts'
import type { Logger } from '../log.ts'
import type { AgentName } from '../acp/dialect.ts'
import { serveAcpChannel } from '../acp/serve-acp-channel.ts'
import { bearerToken, tokenMatches } from './auth.ts'
import { HttpError, errorResponse } from './errors.ts'
import { CORS_MAX_AGE, checkHost, corsHeaders, type GuardOptions } from './guard.ts'
import type { TokenRegistry } from './session-tokens.ts'

export const ACP_PATH = '/acp'

export interface AcpLimits {
  /** Open ACP connections, HTTP and WebSocket together; one more is refused with 503. */
  maxConnections: number
  /** One client message: a POST body, a WebSocket frame (413, or close 1009). */
  maxMessageBytes: number
  /** An HTTP connection with no open stream and no request for this long is closed. */
  idleMs: number
  /** WebSocket ping interval; a socket that answered none of the last one is closed. */
  pingMs: number
  /** Output held per connection for a client that does not read it (the SDK's limit). */
  maxBufferedBytes: number
  /** A connection whose client reads none of its held output for this long is closed. */
  maxOutputStallMs: number
}

export const DEFAULT_ACP_LIMITS: AcpLimits = {
  maxConnections: 64,
  maxMessageBytes: 8 * 1024 * 1024,
  idleMs: 5 * 60_000,
  pingMs: 30_000,
  maxBufferedBytes: 16 * 1024 * 1024,
  maxOutputStallMs: 60_000,
}

/**
 * The SDK closes a WebSocket whose waiting client frames pass `maxBufferedBytes` (each counted
 * as its length + 1 KiB): the held output must exceed two of the largest messages, or one big
 * frame queued behind another would end the connection.
 */
const roomFor = (l: AcpLimits): AcpLimits => ({
  ...l,
  maxBufferedBytes: Math.max(l.maxBufferedBytes, 2 * (l.maxMessageBytes + 1024)),
})

const LIMIT_ENV: Record<keyof AcpLimits, string> = {
  maxConnections: 'CHIMERA_ACP_MAX_CONNECTIONS',
  maxMessageBytes: 'CHIMERA_ACP_MAX_MESSAGE_BYTES',
  idleMs: 'CHIMERA_ACP_IDLE_MS',
  pingMs: 'CHIMERA_ACP_PING_MS',
  maxBufferedBytes: 'CHIMERA_ACP_MAX_BUFFERED_BYTES',
  maxOutputStallMs: 'CHIMERA_ACP_STALL_MS',
}

/** The limits, each overridable by its `CHIMERA_ACP_*` variable (a positive integer). */
export function acpLimits(env: NodeJS.ProcessEnv): AcpLimits {
  const out = { ...DEFAULT_ACP_LIMITS }
  for (const k of Object.keys(LIMIT_ENV) as (keyof AcpLimits)[]) {
    const n = Number(env[LIMIT_ENV[k]])
    if (Number.isSafeInteger(n) && n > 0) out[k] = n
  }
  return out
}

export interface AcpEndpointOptions {
  agent: AgentName
  version: string
  logger: Logger
  manager: SessionManager
  masterToken?: string
  tokens: TokenRegistry
  guard: GuardOptions
  limits?: Partial<AcpLimits>
  /** ferret's cloud bridge (docs/bridge.md), for `bridgeStatus`; absent: none configured. */
  bridge?: () => BridgeStatus
}

/** One ACP connection: who opened it (null: the master token, or auth off; else its session). */
interface AcpConn {
  scope: string | null
  id?: string
  ws: boolean
  lastSeen: number
  /** Open SSE streams (HTTP). */
  streams: number
  closed: boolean
}

/** The SDK's SSE keep-alive (a comment line). */
const KEEP_ALIVE = new TextEncoder().encode(':\n\n')
const CORS_ACP_HEADERS = 'authorization, content-type, acp-connection-id, acp-session-id, last-event-id'
const CORS_ACP_EXPOSE = 'content-type, acp-connection-id'

/** ACP's `Authentication required` (the spec's -32000), for a session token out of its session. */
const AUTH_REQUIRED = -32000
/** Methods a session-scoped connection may call without naming its session. */
const UNSCOPED = new Set(['initialize', 'authenticate', '$/cancel_request'])
/**
 * What a session token may not do on its own session either, as on REST (docs/http.md: answering
 * permission requests and the approval policy are the master token's): the seed dialect's answer
 * and approval methods. (A session token is not asked v1's `session/request_permission`: `send`.)
 */
const MASTER_ONLY = new Set<string>([
  'permission/respond',
  'session/setApproval',
  '_ferret/session/setApproval',
] satisfies (AcpV1Method | AcpSeedMethod)[])
/** The agent's requests a session-scoped connection is not sent (it may not answer them). */
const MASTER_ONLY_ASKS = new Set<string>(['session/request_permission'] satisfies AcpV1Method[])

const isMasterOnlyAsk = (m: unknown): boolean =>
  typeof m === 'object' &&
  m !== null &&
  (m as Message).id !== undefined &&
  typeof (m as Message).method === 'string' &&
  MASTER_ONLY_ASKS.has((m as Message).method as string)

type Message = { id?: unknown; method?: unknown; params?: unknown }

/** For a session-scoped connection: undefined (pass), null (drop a notification), or the error answer. */
function refusal(m: unknown, scope: string): object | null | undefined {
  if (typeof m !== 'object' || m === null) return undefined
  const msg = m as Message
  if (typeof msg.method !== 'string') return undefined // a response to the agent
  if (UNSCOPED.has(msg.method)) return undefined
  const params = msg.params as { sessionId?: unknown; mcpServers?: unknown } | undefined
  // MCP servers are processes started on this machine: the master token's, never a session token's.
  const starts = Array.isArray(params?.mcpServers) && params.mcpServers.length > 0
  const own =
    params?.sessionId === scope &&
    msg.method !== 'session/new' &&
    msg.method !== 'session/list' &&
    !MASTER_ONLY.has(msg.method) &&
    !starts
  if (own) return undefined
  if (msg.id === undefined) return null
  return {
    jsonrpc: '2.0',
    id: msg.id,
    error: {
      code: AUTH_REQUIRED,
      message: 'Authentication required',
      data: {
        detail: starts
          ? `a session token may not start MCP servers ('${msg.method}' with mcpServers needs the master token)`
          : `this connection's session token acts only on session ${scope}; '${msg.method}' needs the master token`,
      },
    },
  }
}

const isInitialize = (m: unknown): boolean =>
  typeof m === 'object' && m !== null && (m as Message).method === 'initialize'

function withHeaders(res: Response, headers: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v)
  return res
}

const sdkText = (body: string, status: number): Response =>
  new Response(body, { status, headers: { 'content-type': 'text/plain' } })

export class AcpEndpoint {
  readonly #o: AcpEndpointOptions
  readonly #limits: AcpLimits
  /** The SDK's server, made on first use. */
  #sdk: Promise<AcpServer> | undefined
  /** The WebSocket server of the upgrades (`attach`), made on the first one. */
  #wss: Promise<WebSocketServer> | undefined
  readonly #conns = new Map<string, AcpConn>()
  readonly #stop = new AbortController()
  readonly #reaper: NodeJS.Timeout
  #open = 0

  constructor(o: AcpEndpointOptions) {
    this.#o = o
    this.#limits = roomFor({ ...DEFAULT_ACP_LIMITS, ...o.limits })
    this.#reaper = setInterval(() => this.#reap(), Math.max(10, Math.min(30_000, this.#limits.idleMs / 2)))
    this.#reaper.unref()
  }

  #server(): Promise<AcpServer> {
    this.#sdk ??= import('@agentclientprotocol/sdk/experimental/server').then(
      ({ AcpServer }) =>
        // The default agent is never used: every connection gets its own, with its principal.
        new AcpServer({
          createAgent: () =>
            this.#connector({ scope: null, ws: false, lastSeen: Date.now(), streams: 0, closed: false }),
          maxBufferedBytes: this.#limits.maxBufferedBytes,
          maxOutputStallMs: this.#limits.maxOutputStallMs,
        }),
      (err: unknown) => {
        this.#sdk = undefined
        throw err
      },
    )
    return this.#sdk
  }

  #wsServer(): Promise<WebSocketServer> {
    this.#wss ??= import('ws').then(
      ({ WebSocketServer }) => {
        const wss = new WebSocketServer({
          noServer: true,
          maxPayload: this.#limits.maxMessageBytes,
          perMessageDeflate: false,
        })
        if (this.#stop.signal.aborted) wss.close()
        else this.#stop.signal.addEventListener('abort', () => wss.close(), { once: true })
        return wss
      },
      (err: unknown) => {
        this.#wss = undefined
        throw err
      },
    )
    return this.#wss
  }

  /** Open ACP connections. */
  get open(): number {
    return this.#open
  }

  /** Shutdown: close every connection (their sessions stay). */
  async close(): Promise<void> {
    clearInterval(this.#reaper)
    this.#stop.abort()
    await this.#sdk?.then((sdk) => sdk.close()).catch(() => undefined)
  }

  /** The agent side of one connection: our engine over the SDK's message stream. */
  #connector(c: AcpConn) {
    return {
      connect: (stream: { readable: ReadableStream<unknown>; writable: WritableStream<unknown> }) => {
        this.#open++
        const reader = stream.readable.getReader()
        const writer = stream.writable.getWriter()
        const scope = c.scope
        // A session-scoped connection is not asked what only the master token may answer: the
        // request waits for another client (the turn goes on when one answers).
        const send = (m: unknown): Promise<void> =>
          scope !== null && isMasterOnlyAsk(m) ? Promise.resolve() : writer.write(m)
        const iterator: AsyncIterator<unknown> = {
          next: async () => {
            for (;;) {
              const r = await reader.read()
              if (r.done) return { done: true, value: undefined }
              c.lastSeen = Date.now()
              const refused = scope === null ? undefined : refusal(r.value, scope)
              if (refused === undefined) return { done: false, value: r.value }
              if (refused) await send(refused)
            }
          },
          return: async () => {
            await reader.cancel().catch(() => undefined)
            return { done: true, value: undefined }
          },
        }
        const closed = serveAcpChannel(
          { messages: { [Symbol.asyncIterator]: () => iterator }, send },
          {
            agent: this.#o.agent,
            version: this.#o.version,
            logger: this.#o.logger,
            manager: this.#o.manager,
            signal: this.#stop.signal,
            detach: true,
            bridge: this.#o.bridge,
          },
        )
          .catch((err: unknown) => this.#o.logger.error('ACP connection failed', err))
          .finally(() => {
            this.#open--
            c.closed = true
            if (c.id) this.#conns.delete(c.id)
            void writer.close().catch(() => undefined)
          })
        return { closed }
      },
    }
  }

  /** Who a request is: null for the master token (or auth off), else the session of its token; 401 otherwise. */
  async #principal(req: Request): Promise<string | null> {
    const master = this.#o.masterToken
    if (master === undefined) return null
    const token = bearerToken(req)
    if (tokenMatches(token, master)) return null
    const session = token === undefined ? undefined : await this.#o.tokens.sessionOf(token)
    if (session === undefined) throw unauthorized()
    return session
  }

  #newConn(scope: string | null, ws: boolean): AcpConn {
    if (this.#open >= this.#limits.maxConnections)
      throw new HttpError(
        'service_unavailable',
        `too many ACP connections (${this.#limits.maxConnections}); close one or try again later`,
        { headers: { 'retry-after': '1' } },
      )
    return { scope, ws, lastSeen: Date.now(), streams: 0, closed: false }
  }

  #register(c: AcpConn, id: string | null): void {
    if (!id || c.closed) return
    c.id = id
    this.#conns.set(id, c)
  }

  /** A Streamable HTTP request to `/acp` (POST a message, GET an SSE stream, DELETE the connection). */
  async handle(req: Request): Promise<Response> {
    let cors: Record<string, string> = {}
    try {
      checkHost(req, this.#o.guard)
      if (req.method === 'OPTIONS' && req.headers.get('origin') !== null) {
        return new Response(null, {
          status: 204,
          headers: {
            ...corsHeaders(req, this.#o.guard),
            'access-control-allow-methods': 'GET, POST, DELETE',
            'access-control-allow-headers': CORS_ACP_HEADERS,
            'access-control-max-age': CORS_MAX_AGE,
          },
        })
      }
      cors = corsHeaders(req, this.#o.guard)
      if (cors['access-control-allow-origin']) cors['access-control-expose-headers'] = CORS_ACP_EXPOSE
      const principal = await this.#principal(req)
      const id = req.headers.get('acp-connection-id')
      const conn = id === null ? undefined : this.#conns.get(id)
      // Another principal's connection (or a WebSocket one) is unknown here, as the SDK says it.
      if (conn && (conn.scope !== principal || conn.ws))
        return withHeaders(sdkText('Unknown Acp-Connection-Id', 404), cors)
      if (conn) conn.lastSeen = Date.now()
      let res: Response
      const sdk = await this.#server()
      if (req.method === 'POST') {
        const body = await readJsonBody(req, this.#limits.maxMessageBytes)
        if (body === undefined) throw new HttpError('invalid_body', 'an ACP message (one JSON-RPC object) is required')
        const again = new Request(req.url, {
          method: 'POST',
          headers: new Headers(req.headers),
          body: JSON.stringify(body),
          signal: req.signal,
        })
        if (id === null && isInitialize(body)) {
          const c = this.#newConn(principal, false)
          res = await sdk.handleRequest(again, { createAgent: () => this.#connector(c) })
          this.#register(c, res.headers.get('acp-connection-id'))
        } else {
          res = await sdk.handleRequest(again)
        }
      } else if (req.method === 'GET' || req.method === 'DELETE') {
        res = await sdk.handleRequest(req)
        if (req.method === 'GET' && res.ok && res.body) res = this.#sse(res, conn)
      } else {
        throw new HttpError('method_not_allowed', `${req.method} is not served on ${ACP_PATH}`, {
          headers: { allow: 'GET, POST, DELETE' },
        })
      }
      return withHeaders(res, cors)
    } catch (err) {
      return withHeaders(errorResponse(err, this.#o.logger), cors)
    }
  }

  /**
   * An SSE response that starts with the SDK's own keep-alive comment (`:`), so its headers
   * leave at once (the Node adapter under h3 sends them with the first chunk; the SDK client
   * waits for them before it posts, and the SDK's first keep-alive comes after 15 s), and whose
   * stream counts as activity of its connection while open.
   */
  #sse(res: Response, c: AcpConn | undefined): Response {
    const reader = res.body!.getReader()
    if (c) c.streams++
    let ended = false
    let first = true
    const end = (): void => {
      if (ended || !c) return
      ended = true
      c.streams--
      c.lastSeen = Date.now()
    }
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(ctl) {
          if (first) {
            first = false
            ctl.enqueue(KEEP_ALIVE)
            return
          }
          try {
            const r = await reader.read()
            if (r.done) {
              end()
              ctl.close()
            } else ctl.enqueue(r.value)
          } catch (err) {
            end()
            ctl.error(err)
          }
        },
        cancel(reason) {
          end()
          return reader.cancel(reason)
        },
      },
      { highWaterMark: 0 },
    )
    return new Response(body, { status: res.status, headers: res.headers })
  }

  /** HTTP connections with no stream open and no request for `idleMs` end (the client vanished without DELETE). */
  #reap(): void {
    const now = Date.now()
    for (const [id, c] of this.#conns) {
      if (c.ws || c.streams > 0 || now - c.lastSeen < this.#limits.idleMs) continue
      this.#conns.delete(id)
      this.#o.logger.info(`ACP connection ${id}: idle for ${this.#limits.idleMs} ms with no stream open; closed`)
      void this.#server().then((sdk) =>
        sdk.handleRequest(
          new Request(`http://localhost${ACP_PATH}`, { method: 'DELETE', headers: { 'acp-connection-id': id } }),
        ),
      )
    }
  }

  /**
   * A WebSocket upgrade of `/acp` (the server's `upgrade` listener hands them here, through
   * start-gate.ts): the same guards as a request; one ACP message per text frame.
   */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => void this.#upgrade(req, socket, head)

  async #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    try {
      const [wss, sdk] = await Promise.all([this.#wsServer(), this.#server()])
      // The client went away while they loaded: nothing to answer.
      if (socket.destroyed) return
      const path = new URL(req.url ?? '/', 'http://localhost').pathname
      if (path !== ACP_PATH) throw new HttpError('not_found', `no WebSocket endpoint at ${path.slice(0, 200)}`)
      if (req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]!.toLowerCase() === 'host').length > 1)
        throw new HttpError('bad_request', 'more than one Host header')
      // The guards read a Request: the upgrade's own headers (Host, Origin, Authorization).
      const headers = new Headers()
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v)
      const r = new Request(`http://localhost${ACP_PATH}`, { headers })
      checkHost(r, this.#o.guard)
      corsHeaders(r, this.#o.guard)
      const principal = await this.#principal(r)
      // The client went away while its token was checked: nothing to answer.
      if (socket.destroyed) return
      const c = this.#newConn(principal, true)
      const upgrade = sdk.prepareWebSocketUpgrade({ createAgent: () => this.#connector(c) })
      this.#register(c, upgrade.connectionId)
      const onHeaders = (lines: string[], request: IncomingMessage): void => {
        if (request === req) lines.push(`Acp-Connection-Id: ${upgrade.connectionId}`)
      }
      const failed = (): void => {
        wss.off('headers', onHeaders)
        this.#conns.delete(upgrade.connectionId)
        upgrade.reject()
      }
      wss.on('headers', onHeaders)
      socket.once('close', failed)
      wss.handleUpgrade(req, socket, head, (ws) => {
        socket.off('close', failed)
        wss.off('headers', onHeaders)
        upgrade.accept(ws)
        this.#keepAlive(ws)
      })
    } catch (err) {
      const res = errorResponse(err, this.#o.logger)
      const body = await res.text()
      const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ''}`]
      res.headers.forEach((v, k) => lines.push(`${k}: ${v}`))
      lines.push(`content-length: ${Buffer.byteLength(body)}`, 'connection: close')
      // Written, then closed both ways: a client that never closes its side holds nothing here.
      socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy())
    }
  }

  /** Ping every `pingMs`; a socket that did not answer the previous ping is closed. */
  #keepAlive(ws: WebSocket): void {
    let alive = true
    ws.on('pong', () => (alive = true))
    ws.on('message', () => (alive = true))
    const t = setInterval(() => {
      if (!alive) {
        this.#o.logger.info('ACP WebSocket: no answer to a ping; closed')
        ws.terminate()
        return
      }
      alive = false
      ws.ping()
    }, this.#limits.pingMs)
    t.unref()
    ws.once('close', () => clearInterval(t))
  }
}
