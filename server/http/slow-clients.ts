/**
 * Cuts clients that hold a connection without finishing a request: headers not complete within
 * `headersMs` of the connection (or of the previous response, on a kept-alive connection), or a
 * request body not complete within `bodyMs` of its headers. Node's own `headersTimeout` and
 * `requestTimeout` are checked only every `connectionsCheckingInterval` (30 s, fixed when the
 * server is created — by listhen here), so a slow client would keep its descriptor for up to
 * 90 s; these timers fire on time. Responses that stream for long (SSE) are not affected: the
 * body timer stops when the request body ends, which for a GET is at once.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

export interface SlowClientLimits {
  headersMs: number
  bodyMs: number
}

export function guardSlowClients(server: Server, limits: SlowClientLimits): void {
  const headerTimers = new WeakMap<Socket, NodeJS.Timeout>()
  const armHeaders = (socket: Socket): void => {
    clearTimeout(headerTimers.get(socket))
    const t = setTimeout(() => socket.destroy(), limits.headersMs)
    t.unref()
    headerTimers.set(socket, t)
  }
  server.on('connection', (socket: Socket) => {
    armHeaders(socket)
    socket.once('close', () => clearTimeout(headerTimers.get(socket)))
  })
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    clearTimeout(headerTimers.get(socket))
    if (!req.complete) {
      const body = setTimeout(() => socket.destroy(), limits.bodyMs)
      body.unref()
      const stop = (): void => clearTimeout(body)
      req.once('end', stop)
      req.once('close', stop)
    }
    // Kept alive: the next request's headers must arrive in time too.
    res.once('finish', () => {
      if (!socket.destroyed) armHeaders(socket)
    })
  })
}
