/**
 * Connection limits of the Node server, on time and fair:
 * - headers not complete within `headersMs` of the connection (or of the previous response, on
 *   a kept-alive connection) cut the socket, so a socket that never sends a request is closed;
 * - a request body not complete within `bodyMs` of its headers cuts the socket. Only the body:
 *   a response may stream for as long as it likes (an SSE stream runs until its turn ends or the
 *   client leaves; slow readers are cut by the stream's own no-read rule, sse-stream.ts);
 * - at most `maxConnections` sockets. At the cap a new connection closes the oldest socket that
 *   is waiting for a request instead of being refused — one that never sent a request first, a
 *   kept-alive one between requests only when there is none — so idle sockets cannot lock out
 *   `/health` or the master token; only when every socket is busy is the new one refused.
 * Node's own `headersTimeout` and `requestTimeout` are checked only every
 * `connectionsCheckingInterval` (30 s, fixed when the server is created — by listhen here), so
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
}

export function guardSlowClients(server: Server, limits: SlowClientLimits, logger?: Logger): void {
  const headerTimers = new WeakMap<Socket, NodeJS.Timeout>()
  /** Every open socket, oldest first: waiting for a request, and whether it has been served one. */
  const open = new Map<Socket, { waiting: boolean; served: boolean }>()
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
    })
  })
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
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
    // Kept alive: the next request's headers must arrive in time too.
    res.once('finish', () => {
      if (!socket.destroyed) armHeaders(socket)
    })
  })
}
