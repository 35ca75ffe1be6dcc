/**
 * A remote ACP connection to a Chimera server's `/acp` (docs/remote-acp.md): the official SDK's
 * own client transports (Streamable HTTP, or WebSocket with a constructor that sends headers,
 * such as `ws`'s) with the product's bearer auth, and the official SDK's client app on top,
 * so everything `spawnAgent` offers over stdio works the same over the network.
 *
 * A reconnect is a new connection: `initialize`, then `session/load` (the history is replayed
 * before its answer) with the same token; pass one `cookieStore` to keep a load balancer's
 * affinity across connections.
 */
import { client as acpClient, type ClientApp, type ClientContext } from '@agentclientprotocol/sdk'
import { createHttpStream, type AcpCookieStore } from '@agentclientprotocol/sdk/experimental/http-client'
import { createWebSocketStream, type WebSocketConstructor } from '@agentclientprotocol/sdk/experimental/ws-client'
import { chimeraExtensions, type ChimeraExtensions } from './acp.ts'

export interface RemoteAgentOptions {
  /** The server's base URL (`http(s)://host:port`) or its `/acp` URL; `ws(s)://` selects WebSocket. */
  url: string
  /** The master token, or a session token (which confines the connection to its own session). */
  token?: string
  /** `http` (default for http(s) URLs) or `ws` (default for ws(s) URLs). */
  transport?: 'http' | 'ws'
  /** WebSocket constructor that can send headers (`import { WebSocket } from 'ws'`); required for `ws`. */
  WebSocket?: WebSocketConstructor
  /** The client app with your handlers; default: an app with none. */
  app?: ClientApp
  /** Affinity cookies kept across reconnects (the SDK's `MemoryAcpCookieStore`). */
  cookieStore?: AcpCookieStore
  /** Extra headers on every request (HTTP) or on the upgrade (WebSocket). */
  headers?: Record<string, string>
}

export interface RemoteAgentConnection {
  /** Calls agent methods (`agent.request(methods.agent.initialize, …)`, …). */
  agent: ClientContext
  ext: ChimeraExtensions
  /** Aborts when the connection closes (the server went away, a 401, a dropped socket). */
  readonly signal: AbortSignal
  readonly closed: Promise<void>
  /** Ends the connection (HTTP: `DELETE /acp`; WS: a close frame). The sessions stay on the server. */
  close(): void
}

/** `…/acp` for a base URL, and the scheme the transport needs. */
function acpUrl(url: string, transport: 'http' | 'ws'): string {
  const u = new URL(url)
  if (!u.pathname.endsWith('/acp')) u.pathname = `${u.pathname.replace(/\/$/, '')}/acp`
  if (transport === 'ws') u.protocol = u.protocol === 'https:' || u.protocol === 'wss:' ? 'wss:' : 'ws:'
  else u.protocol = u.protocol === 'wss:' || u.protocol === 'https:' ? 'https:' : 'http:'
  return u.toString()
}

/** Opens a remote ACP connection to `/acp` and connects the SDK's client app to it. */
export function connectRemoteAgent(o: RemoteAgentOptions): RemoteAgentConnection {
  const transport = o.transport ?? (/^wss?:/i.test(o.url) ? 'ws' : 'http')
  const headers = { ...o.headers, ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) }
  const target = acpUrl(o.url, transport)
  let stream
  if (transport === 'ws') {
    if (!o.WebSocket)
      throw new TypeError(
        "connectRemoteAgent: the ws transport needs a WebSocket constructor that sends headers (import { WebSocket } from 'ws')",
      )
    stream = createWebSocketStream(target, {
      WebSocket: o.WebSocket,
      headers,
      ...(o.cookieStore ? { cookieStore: o.cookieStore } : {}),
    })
  } else {
    stream = createHttpStream(target, { headers, ...(o.cookieStore ? { cookieStore: o.cookieStore } : {}) })
  }
  const connection = (o.app ?? acpClient({ name: 'chimera-client' })).connect(stream)
  const agent = connection.agent
  return {
    agent,
    ext: chimeraExtensions(agent),
    signal: connection.signal,
    closed: connection.closed,
    close: () => connection.close(),
  }
}
