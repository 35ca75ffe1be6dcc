/**
 * The cloud bridge's relay (`chimera relay serve`, docs/bridge.md): the one place that listens.
 * An editor's ferret dials in on `/bridge` with the bridge token and keeps that control link up;
 * remote ACP clients connect on `/acp` with a client token. For each client the relay asks the
 * editor, on the control link, to dial a channel socket (`/bridge/channels/<id>`), then completes
 * both WebSocket upgrades and passes text frames between the two unchanged: ACP over WebSocket on
 * the client's side, the editor's own ACP server on the other. The relay holds no session, no
 * model key and no history: a client that reconnects gets the history from the editor.
 *
 * Guards: tokens compared in constant time (unknown ones refused with 401 before any upgrade), a
 * message size limit, a cap on clients, an idle timeout per client, pings that end dead peers,
 * backpressure per channel (a reader that stops pauses its writer's socket). With no editor
 * attached a client is answered 503 `service_unavailable` ("no editor is attached to this relay").
 */
import { randomUUID } from '../platform/random.ts'
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocket, WebSocketServer, type RawData } from 'ws'
import type { ErrorCode } from '../../generated/schemas.gen.ts'
import { listen } from '../http/listen.ts'
import type { Logger } from '../log.ts'
import { BRIDGE_PATH, CHANNELS, CLIENT_PATH, CLOSE, anyTokenMatches, bearer, type OpenChannel } from './link-wire.ts'

export interface RelayOptions {
  host: string
  port: number
  tls?: { cert: string; key: string }
  /** The token the editor's ferret presents on `/bridge`. */
  bridgeToken: string
  /** The tokens remote clients present on `/acp`. */
  clientTokens: readonly string[]
  /** The largest WebSocket message, either way (default 32 MiB, as the ACP stdio server). */
  maxMessageBytes?: number
  /** A client with no message either way for this long is closed (default 10 minutes; 0: never). */
  idleTimeoutMs?: number
  /** Remote clients at once (default 64). */
  maxClients?: number
  /** How long the editor has to dial a client's channel (default 10 s). */
  openTimeoutMs?: number
  /** Pings every socket this often; one that has not answered the previous ping is ended (default 30 s). */
  pingIntervalMs?: number
  logger: Logger
}

export interface Relay {
  /** `http://host:port` or `https://…`; the bridge URL is `ws(s)://host:port/bridge`. */
  url: string
  close(): Promise<void>
}

interface Pair {
  client: WebSocket
  channel: WebSocket
  last: number
}

interface Waiting {
  req: IncomingMessage
  socket: Duplex
  head: Buffer
  timer: NodeJS.Timeout
}

/** Bytes buffered towards a socket before the socket feeding it is paused. */
const HIGH_WATER_BYTES = 1024 * 1024

export async function startRelay(o: RelayOptions): Promise<Relay> {
  const maxPayload = o.maxMessageBytes ?? 32 * 1024 * 1024
  const idleMs = o.idleTimeoutMs ?? 600_000
  const maxClients = o.maxClients ?? 64
  const wss = new WebSocketServer({ noServer: true, maxPayload })
  let editor: { ws: WebSocket; since: Date } | undefined
  const waiting = new Map<string, Waiting>()
  const pairs = new Set<Pair>()
  const alive = new WeakMap<WebSocket, boolean>()

  const track = (ws: WebSocket): void => {
    alive.set(ws, true)
    ws.on('pong', () => alive.set(ws, true))
  }

  const detachEditor = (why: string): void => {
    for (const w of waiting.values()) refuse(w.socket, 503, 'service_unavailable', `the editor detached: ${why}`)
    for (const [id, w] of waiting) {
      clearTimeout(w.timer)
      waiting.delete(id)
    }
    for (const p of pairs) {
      p.client.close(CLOSE.editorDetached, 'the editor detached; reconnect, initialize and session/load')
      p.channel.close(CLOSE.editorDetached, 'the editor link went down')
    }
  }

  const onEditor = (ws: WebSocket): void => {
    const old = editor
    editor = { ws, since: new Date() }
    track(ws)
    if (old) {
      o.logger.info('a newer editor link replaces the attached one')
      old.ws.close(CLOSE.replaced, 'replaced by a newer editor link')
      detachEditor('replaced by a newer editor link')
    }
    o.logger.info('editor attached')
    ws.on('message', () => undefined)
    ws.on('close', (code) => {
      if (editor?.ws !== ws) return
      editor = undefined
      o.logger.info(`editor detached (${code})`)
      detachEditor(`its link closed (${code})`)
    })
    ws.on('error', (err) => o.logger.warn(`editor link: ${err.message}`))
  }

  /** Pass text frames from `from` to `to`, pausing `from` while `to` holds too much. */
  const forward = (pair: Pair, from: WebSocket, to: WebSocket): void => {
    from.on('message', (data: RawData, binary: boolean) => {
      pair.last = Date.now()
      if (to.readyState !== WebSocket.OPEN) return
      to.send(data, { binary }, () => {
        if (from.isPaused && to.bufferedAmount < HIGH_WATER_BYTES / 2) from.resume()
      })
      if (to.bufferedAmount >= HIGH_WATER_BYTES) from.pause()
    })
    from.on('close', (code, reason) => {
      from.resume()
      const normal = code === 1000 || (code >= 4000 && code < 5000)
      to.close(normal ? code : CLOSE.peerGone, normal ? reason.toString('utf8') : `the other end went away (${code})`)
    })
    from.on('error', () => undefined)
  }

  const onChannel = (id: string, req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const w = waiting.get(id)
    if (!w) return refuse(socket, 404, 'not_found', 'no remote client is waiting on this channel')
    waiting.delete(id)
    clearTimeout(w.timer)
    // The client left while the editor dialled: no channel is opened for nobody.
    if (w.socket.destroyed) return refuse(socket, 404, 'not_found', 'the remote client of this channel went away')
    wss.handleUpgrade(req, socket, head, (channel) => {
      wss.handleUpgrade(w.req, w.socket, w.head, (client) => {
        const pair: Pair = { client, channel, last: Date.now() }
        pairs.add(pair)
        track(client)
        track(channel)
        forward(pair, client, channel)
        forward(pair, channel, client)
        client.on('close', () => pairs.delete(pair))
        o.logger.info(`remote client ${id.slice(0, 8)} connected (${pairs.size} now)`)
        client.on('close', (code) => o.logger.info(`remote client ${id.slice(0, 8)} disconnected (${code})`))
      })
    })
  }

  const onClient = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // A handshake the WebSocket server would not accept is refused before the editor is asked to
    // open a channel for it (that channel would stay open on the editor, paired with nothing).
    if (!validHandshake(req)) return refuse(socket, 400, 'bad_request', 'not a valid WebSocket handshake')
    if (!editor)
      return refuse(socket, 503, 'service_unavailable', 'no editor is attached to this relay', { 'retry-after': '5' })
    if (pairs.size + waiting.size >= maxClients)
      return refuse(socket, 503, 'too_many_streams', `this relay carries at most ${maxClients} remote clients`)
    const id = randomUUID()
    const timer = setTimeout(() => {
      waiting.delete(id)
      refuse(socket, 504, 'service_unavailable', 'the editor did not open a channel in time')
    }, o.openTimeoutMs ?? 10_000)
    waiting.set(id, { req, socket, head, timer })
    socket.once('close', () => {
      if (waiting.get(id)?.socket !== socket) return
      clearTimeout(timer)
      waiting.delete(id)
    })
    editor.ws.send(JSON.stringify({ type: 'open', channel: id } satisfies OpenChannel))
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined)
    const path = new URL(req.url ?? '/', 'http://relay').pathname
    const token = bearer(req.headers.authorization)
    if (path === CLIENT_PATH) {
      if (!anyTokenMatches(token, o.clientTokens)) return unauthorized(socket)
      return onClient(req, socket, head)
    }
    if (path === BRIDGE_PATH || path.startsWith(BRIDGE_PATH + CHANNELS)) {
      if (!anyTokenMatches(token, [o.bridgeToken])) return unauthorized(socket)
      if (path === BRIDGE_PATH) return wss.handleUpgrade(req, socket, head, onEditor)
      return onChannel(path.slice((BRIDGE_PATH + CHANNELS).length), req, socket, head)
    }
    refuse(
      socket,
      404,
      'not_found',
      `no WebSocket endpoint at ${path} (clients: ${CLIENT_PATH}, editors: ${BRIDGE_PATH})`,
    )
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? '/', 'http://relay').pathname
    if (path === '/health' && (req.method === 'GET' || req.method === 'HEAD'))
      return json(res, 200, { status: 'ok', editor: editor ? 'attached' : 'detached' })
    if (path === CLIENT_PATH || path === BRIDGE_PATH)
      return json(
        res,
        426,
        { error: 'bad_request', message: 'a WebSocket upgrade is expected here' },
        { upgrade: 'websocket' },
      )
    json(res, 404, { error: 'not_found', message: `no route ${req.method ?? ''} ${path}` })
  }

  // The server's own listen and graceful close (server/http/listen.ts), as `otter serve` binds.
  const listener = await listen(onRequest, { host: o.host, port: o.port, ...(o.tls ? { https: o.tls } : {}) })
  const { server, url } = listener
  server.on('upgrade', onUpgrade)
  server.headersTimeout = 10_000
  server.requestTimeout = 30_000

  const ticker = setInterval(
    () => {
      const now = Date.now()
      for (const p of pairs)
        if (idleMs > 0 && now - p.last >= idleMs) {
          p.client.close(CLOSE.idle, `idle for ${Math.round(idleMs / 1000)} s`)
          p.channel.close(CLOSE.idle, 'the remote client was idle')
        }
      for (const ws of wss.clients) {
        if (alive.get(ws) === false) {
          ws.terminate()
          continue
        }
        alive.set(ws, false)
        ws.ping()
      }
    },
    Math.min(o.pingIntervalMs ?? 30_000, idleMs > 0 ? idleMs : Infinity),
  )
  return {
    url,
    async close() {
      clearInterval(ticker)
      for (const w of waiting.values()) {
        clearTimeout(w.timer)
        w.socket.destroy()
      }
      waiting.clear()
      for (const ws of wss.clients) ws.close(1001, 'the relay is shutting down')
      const closed = listener.close()
      server.closeAllConnections()
      await closed
    },
  }
}

function json(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

/** Answer an upgrade request with an HTTP error (the product's error body) instead of upgrading. */
function refuse(
  socket: Duplex,
  status: number,
  error: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (socket.destroyed) return
  const body = JSON.stringify({ error, message })
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ]
  // Written, then closed both ways: a client that never closes its side holds nothing here.
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy())
}

/** What `ws` checks before it upgrades (RFC 6455 §4.2.1): GET, a 16-byte key, version 8 or 13. */
function validHandshake(req: IncomingMessage): boolean {
  const key = req.headers['sec-websocket-key']
  const version = req.headers['sec-websocket-version']
  return (
    req.method === 'GET' &&
    (req.headers.upgrade ?? '').toLowerCase() === 'websocket' &&
    typeof key === 'string' &&
    /^[+/0-9A-Za-z]{22}==$/.test(key) &&
    (version === '8' || version === '13')
  )
}

const unauthorized = (socket: Duplex): void =>
  refuse(socket, 401, 'unauthorized', 'missing or invalid bearer token', { 'www-authenticate': 'Bearer' })
