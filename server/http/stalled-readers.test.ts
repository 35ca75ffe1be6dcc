/**
 * A client that stops reading a response cannot hold its socket and buffers for ever
 * (slow-clients.ts): a non-stream response whose client takes no bytes for `stallMs` is cut, and
 * at the connection cap a stalled socket makes room for a new client. Event streams are left to
 * their own no-read rule. A plain node:http server stands in for the app: what matters is the
 * guard's view of the socket.
 */
import { createServer, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { guardSlowClients } from './slow-clients.ts'

const BIG = Buffer.alloc(64 * 1024 * 1024, 0x61)
const servers: Server[] = []
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
})

/** The server's side of each connection, in the order they arrived (a paused client sees no close). */
let accepted: Socket[] = []

async function serve(limits: Parameters<typeof guardSlowClients>[1], type = 'text/html'): Promise<number> {
  accepted = []
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': type })
    res.end(BIG)
  })
  server.on('connection', (s: Socket) => accepted.push(s))
  servers.push(server)
  guardSlowClients(server, limits)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return (server.address() as AddressInfo).port
}

/** Ask for the page, read its first bytes, then stop reading; `socket` is the server's side. */
async function stalledClient(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const client = connect(port, '127.0.0.1')
  sockets.push(client)
  await new Promise<void>((r) => client.once('connect', () => r()))
  client.write('GET /page HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  await new Promise<void>((r) => client.once('data', () => r()))
  client.pause()
  const socket = accepted.at(-1)!
  const closed = socket.destroyed ? Promise.resolve() : new Promise<void>((r) => socket.once('close', () => r()))
  return { socket, closed }
}

describe('clients that stop reading a response', () => {
  it('are cut once they take no bytes for stallMs', async () => {
    const port = await serve({ headersMs: 10_000, bodyMs: 10_000, stallMs: 300 })
    const { closed } = await stalledClient(port)
    let cut = false
    void closed.then(() => (cut = true))
    // The gate: the guard closes the socket (bounded wait, well past stallMs plus a check).
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5000))])
    expect(cut).toBe(true)
  })

  it('make room at the connection cap for a new client', async () => {
    const port = await serve({ headersMs: 10_000, bodyMs: 10_000, stallMs: 60_000, maxConnections: 2 })
    const a = await stalledClient(port)
    const b = await stalledClient(port)
    // Both responses are stalled (the guard checks every second); a third client still gets in.
    await new Promise((r) => setTimeout(r, 2200))
    const c = await stalledClient(port)
    await Promise.race([Promise.any([a.closed, b.closed]), new Promise((r) => setTimeout(r, 3000))])
    expect(a.socket.destroyed || b.socket.destroyed).toBe(true)
    expect(c.socket.destroyed).toBe(false)
  })

  it('leave an event stream to its own no-read rule', async () => {
    const port = await serve({ headersMs: 10_000, bodyMs: 10_000, stallMs: 300 }, 'text/event-stream')
    const { socket } = await stalledClient(port)
    await new Promise((r) => setTimeout(r, 1800))
    expect(socket.destroyed).toBe(false)
  })
})
