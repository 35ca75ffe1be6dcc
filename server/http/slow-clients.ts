/**
 * Connection limits of the Node server, on time and fair:
 * - headers not complete within `headersMs` of the connection (or of the previous response, on
 *   a kept-alive connection) cut the socket, so a socket that never sends a request is closed;
 * - a request body not complete within `bodyMs` of its headers cuts the socket. Only the body:
 *   a response may stream for as long as it likes (an SSE stream runs until its turn ends or the
 *   client leaves; slow readers are cut by the stream's own no-read rule, sse-stream.ts);
 * - a response (other than an event stream, which has its own no-read rule) whose client stops
 *   reading — bytes waiting in the socket and none taken for `stallMs` — cuts the socket, with a
 *   log line, so unread pages cannot hold descriptors and buffers for ever;
 * - at most `maxConnections` sockets. At the cap a new connection closes the oldest socket that
 *   is waiting for a request instead of being refused — one that never sent a request first, a
 *   kept-alive one between requests only when there is none, else one whose client stopped
 *   reading its response — so idle or stalled sockets cannot lock out `/health` or the master
 *   token; only when every socket is busy is the new one refused.
 * Node's own `headersTimeout` and `requestTimeout` are checked only every
 * `connectionsCheckingInterval` (30 s, fixed when the server is created — by server/http/listen.ts here), so
 * a slow client would keep its descriptor for up to 90 s; these timers fire on time.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from '../log.ts'

export interface SlowClientLimits {
  headersMs: number
  bodyMs: number
  /** Sockets held at once (default: unlimited). */
  maxConnections?: number
  /** A non-stream response whose client takes no bytes for this long is cut (default 30 s). */
  stallMs?: number
}

/** How often responses are checked for a client that stopped reading. */
const STALL_CHECK_MS = 1000

export function guardSlowClients(server: Server, limits: SlowClientLimits, logger?: Logger): void {
  const headerTimers = new WeakMap<Socket, NodeJS.Timeout>()
  /** Every open socket, oldest first: waiting for a request, and whether it has been served one. */
  const open = new Map<Socket, { waiting: boolean; served: boolean }>()
  /** Non-stream responses in flight: the bytes the client had taken when last seen moving. */
  const writing = new Map<Socket, { bytes: number; since: number }>()
  const stallMs = limits.stallMs ?? 30_000
  const stalled = (socket: Socket, forMs: number): boolean => {
    const w = writing.get(socket)
    return w !== undefined && socket.writableLength > 0 && Date.now() - w.since >= forMs
  }
  // `bytesWritten` counts what is still queued too: what the client took is the difference.
  const taken = (socket: Socket): number => socket.bytesWritten - socket.writableLength
  const checker = setInterval(
    () => {
      for (const [socket, w] of writing) {
        if (taken(socket) !== w.bytes || socket.writableLength === 0) {
          w.bytes = taken(socket)
          w.since = Date.now()
        } else if (stalled(socket, stallMs)) {
          writing.delete(socket)
          logger?.info(`HTTP: client read nothing of its response for ${stallMs} ms; connection closed`)
          socket.destroy()
        }
      }
    },
    Math.min(STALL_CHECK_MS, stallMs),
  )
  checker.unref()
  server.once('close', () => clearInterval(checker))
  let evicted = 0
  const armHeaders = (socket: Socket): void => {
    clearTimeout(headerTimers.get(socket))
    const t = setTimeout(() => socket.destroy(), limits.headersMs)
    t.unref()
    headerTimers.set(socket, t)
    const s = open.get(socket)
    if (s) s.waiting = true
  }
  const makeRoom = (): boolean => {
    const max = limits.maxConnections
    if (max === undefined || open.size < max) return true
    // A socket that never sent a request goes first; a kept-alive one (a client we served) only
    // when there is no such socket.
    for (const servedToo of [false, true]) {
      for (const [socket, s] of open) {
        if (!s.waiting || (s.served && !servedToo)) continue
        open.delete(socket)
        socket.destroy()
        if (evicted++ % 1000 === 0)
          logger?.warn(
            `HTTP: ${max} connections open; closing the oldest idle one for a new client (${evicted} so far)`,
          )
        return true
      }
    }
    // Else a socket whose client stopped reading its response (a second without taking a byte).
    for (const socket of open.keys()) {
      if (!stalled(socket, STALL_CHECK_MS)) continue
      open.delete(socket)
      writing.delete(socket)
      socket.destroy()
      return true
    }
    return false
  }
  server.on('connection', (socket: Socket) => {
    if (!makeRoom()) {
      socket.destroy()
      return
    }
    open.set(socket, { waiting: true, served: false })
    armHeaders(socket)
    socket.once('close', () => {
      clearTimeout(headerTimers.get(socket))
      open.delete(socket)
      writing.delete(socket)
    })
  })
  // An upgraded socket (the WebSocket transport of /acp) leaves HTTP: no header timer, and the
  // ACP endpoint's own cap counts it instead (server/http/acp-endpoint.ts).
  server.prependListener('upgrade', (req: IncomingMessage) => {
    clearTimeout(headerTimers.get(req.socket))
    open.delete(req.socket)
  })
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    clearTimeout(headerTimers.get(socket))
    const s = open.get(socket)
    if (s) {
      s.waiting = false
      s.served = true
    }
    if (!req.complete) {
      // `complete` is set when the parser has the whole body, read or not; `end` would come only
      // once a handler reads it, and an SSE handler never does (its GET has no body): waiting
      // for `end` cut every stream after `bodyMs`, mid-turn, with no `end` record.
      const body = setTimeout(() => {
        if (req.complete) return
        logger?.info(`HTTP: request body not complete within ${limits.bodyMs} ms; connection closed`)
        socket.destroy()
      }, limits.bodyMs)
      body.unref()
      const stop = (): void => clearTimeout(body)
      req.once('end', stop)
      req.once('close', stop)
      res.once('close', stop)
    }
    // Watched for a client that stops reading, once the handler chose what it answers: an event
    // stream is left to its own no-read rule (sse-stream.ts). This listener runs before the app's
    // (prependListener below), so every head goes through the wrapper.
    const origWriteHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse
    res.writeHead = ((...a: unknown[]) => {
      const r = origWriteHead(...a)
      if (!/^text\/event-stream/i.test(contentType(res, a)))
        writing.set(socket, { bytes: taken(socket), since: Date.now() })
      return r
    }) as typeof res.writeHead
    // Kept alive: the next request's headers must arrive in time too.
    res.once('finish', () => {
      writing.delete(socket)
      if (!socket.destroyed) armHeaders(socket)
    })
  })
}

/** The content type a response head declares: from `writeHead`'s headers argument, else set ones. */
function contentType(res: ServerResponse, args: unknown[]): string {
  const headers = args.find((a) => typeof a === 'object' && a !== null)
  if (Array.isArray(headers)) {
    // Raw headers: [name, value, name, value…] or [[name, value]…].
    const flat = headers.flat() as unknown[]
    for (let i = 0; i + 1 < flat.length; i += 2)
      if (String(flat[i]).toLowerCase() === 'content-type') return String(flat[i + 1])
  } else if (headers) {
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === 'content-type') return String(v)
  }
  return String(res.getHeader('content-type') ?? '')
}
