/**
 * Bind a Node request listener on host:port over HTTP or HTTPS, with a graceful close: the
 * listener stops, idle connections close at once, and a connection whose response is still being
 * written closes as soon as that response finishes (never in the middle of it, so an SSE stream's
 * last chunk reaches its client). `chimera otter serve` and the conformance harness's socket
 * target serve through it. Node's own `http`/`https` only: nothing else loads before the first
 * request is answered (docs/decisions/0350-start-up-at-the-floor.md), and `node:http` is taken
 * without building its ES namespace (server/platform/builtins.ts `http`).
 */
import type { RequestListener, Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { http } from '../platform/builtins.ts'

export interface Listener {
  server: Server
  /** `http://host:port` (the bound port; an IPv6 host in brackets). */
  url: string
  port: number
  /** Stops listening; idle connections close now, busy ones when their response finishes. */
  close(): Promise<void>
}

export interface ListenOptions {
  host: string
  /** 0: a free port the system picks. */
  port: number
  https?: { cert: string; key: string }
}

/**
 * Tracks the connections of `server` so that `shutdown()` can close each one when it is idle:
 * those waiting for a request at once, the others when their current response has finished.
 */
function gracefulClose(server: Server, tls: boolean): () => Promise<void> {
  const idle = new Map<Socket, boolean>()
  let closing = false
  const track = (socket: Socket): void => {
    idle.set(socket, true)
    socket.once('close', () => idle.delete(socket))
  }
  // Over TLS the raw TCP socket never sees a request (the TLS socket over it does): only the TLS
  // socket is tracked, or shutdown would destroy the TCP socket under a response still being written.
  server.on(tls ? 'secureConnection' : 'connection', track)
  server.on('request', (req, res) => {
    const socket = req.socket
    idle.set(socket, false)
    res.once('finish', () => {
      idle.set(socket, true)
      if (closing) socket.destroy()
    })
  })
  return () =>
    new Promise<void>((resolve) => {
      closing = true
      server.close(() => resolve())
      for (const [socket, isIdle] of idle) if (isIdle) socket.destroy()
    })
}

export async function listen(handler: RequestListener, o: ListenOptions): Promise<Listener> {
  // node:https (and TLS under it) loads only for a TLS server.
  const server: Server = o.https
    ? (await import('node:https')).createServer(o.https, handler)
    : http().createServer(handler)
  const shutdown = gracefulClose(server, o.https !== undefined)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const host = o.host.includes(':') && !o.host.startsWith('[') ? `[${o.host}]` : o.host
  let closed: Promise<void> | undefined
  return {
    server,
    port,
    url: `${o.https ? 'https' : 'http'}://${host}:${port}`,
    close: () => (closed ??= shutdown()),
  }
}
