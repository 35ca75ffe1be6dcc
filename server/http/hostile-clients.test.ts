/**
 * HTTP guards against hostile clients: the DNS-rebinding check compares parsed
 * IP literals and exact names (`127.evil.com`, `127.0.0.1.nip.io`, `[::1].evil.com` are refused),
 * two `Host` headers are a 400, clients that never finish their headers or body are cut on time,
 * and connections are capped — over a real socket, with raw TCP clients.
 */
import { createServer, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { checkHost } from './guard.ts'
import { hostName } from './host-names.ts'
import { nodeHandler } from './node-handler.ts'
import { inProcessTarget } from '../../conformance/harness/targets.ts'
import { guardSlowClients, type SlowClientLimits } from './slow-clients.ts'

const app = () => inProcessTarget().server.app
const req = (host: string) => new Request('http://127.0.0.1/health', { headers: { host } })

describe('the Host check', () => {
  const guard = { cors: [], allowedHosts: ['chimera.test'] }
  for (const host of [
    'localhost',
    'localhost:5173',
    '127.0.0.1',
    '127.0.0.1:5173',
    '127.5.6.7:80',
    '[::1]',
    '[::1]:5173',
    'LOCALHOST:1',
    'chimera.test:8080',
  ]) {
    it(`accepts ${host}`, () => {
      expect(() => checkHost(req(host), guard)).not.toThrow()
    })
  }
  for (const host of [
    '127.evil.com',
    '127.0.0.1.nip.io',
    '[::1].evil.com',
    'localhost.evil.com',
    'evil.com',
    '127.0.0.1, evil.com',
    '127.0.0.1:5173:1',
    '[::1]junk',
    '',
    '0x7f.1',
    '2130706433',
    'chimera.test.evil.com',
    '[::2]',
  ]) {
    it(`refuses ${JSON.stringify(host)} with 421 misdirected_request`, () => {
      expect(() => checkHost(req(host), guard)).toThrow(
        expect.objectContaining({ status: 421, code: 'misdirected_request' }),
      )
    })
  }
  it('parses host names', () => {
    expect(hostName('[::1]:80')).toBe('::1')
    expect(hostName('Example.COM:443')).toBe('example.com')
    expect(hostName('a b')).toBeUndefined()
  })
})

let server: Server | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()))
  server = undefined
})

async function listen(limits: SlowClientLimits = { headersMs: 300, bodyMs: 300 }): Promise<number> {
  server = createServer(nodeHandler(app()))
  guardSlowClients(server, limits)
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  return (server.address() as { port: number }).port
}

/** A raw TCP client: what it receives, and when the server closes it. */
function raw(port: number): { socket: Socket; received: () => string; closed: Promise<number> } {
  const socket = connect(port, '127.0.0.1')
  sockets.push(socket)
  let data = ''
  socket.setEncoding('utf8').on('data', (d: string) => (data += d))
  socket.on('error', () => {})
  const start = Date.now()
  const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - start)))
  return { socket, received: () => data, closed }
}

describe('over a real socket', () => {
  it('two Host headers: 400, nothing routed', async () => {
    const port = await listen()
    const c = raw(port)
    c.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.com\r\n\r\n')
    await c.closed
    expect(c.received()).toMatch(/^HTTP\/1\.1 400 /)
    expect(c.received()).toContain('more than one Host header')
  })

  it('a client that never finishes its headers is cut after the headers limit', async () => {
    const port = await listen()
    const c = raw(port)
    c.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
    const ms = await c.closed
    expect(ms).toBeGreaterThanOrEqual(250)
    expect(ms).toBeLessThan(5000)
    expect(c.received()).toBe('')
  })

  it('a client that trickles its headers a byte at a time is still cut', async () => {
    const port = await listen()
    const c = raw(port)
    const timer = setInterval(() => c.socket.write('a'), 50)
    c.socket.write('GET /health HTTP/1.1\r\nX-Slow: ')
    const ms = await c.closed
    clearInterval(timer)
    expect(ms).toBeLessThan(5000)
  })

  it('a body that never completes is cut after the body limit; a complete request is answered', async () => {
    const port = await listen()
    const c = raw(port)
    c.socket.write(
      'POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"prompt":',
    )
    const ms = await c.closed
    expect(ms).toBeLessThan(5000)
    const ok = await fetch(`http://127.0.0.1:${port}/health`)
    expect(ok.status).toBe(200)
  })

  it('a kept-alive connection must send its next request in time too', async () => {
    const port = await listen()
    const c = raw(port)
    c.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    const ms = await c.closed
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(ms).toBeLessThan(5000)
  })

  it('at the connection cap, sockets that never sent a request give way: /health still answers', async () => {
    const port = await listen({ headersMs: 5000, bodyMs: 5000, maxConnections: 5 })
    const idle = Array.from({ length: 20 }, () => raw(port))
    await new Promise((r) => setTimeout(r, 100))
    const t0 = Date.now()
    const ok = await fetch(`http://127.0.0.1:${port}/health`)
    expect(ok.status).toBe(200)
    expect(Date.now() - t0).toBeLessThan(2000)
    // The oldest idle sockets were closed to make room (long before their 5 s header limit).
    const closed = await Promise.race([idle[0]!.closed, new Promise<number>((r) => setTimeout(() => r(-1), 2000))])
    expect(closed).toBeGreaterThanOrEqual(0)
    expect(closed).toBeLessThan(2000)
  })

  it('at the connection cap with every socket busy mid-request, a new one is refused', async () => {
    const port = await listen({ headersMs: 5000, bodyMs: 5000, maxConnections: 3 })
    const busy = Array.from({ length: 3 }, () => raw(port))
    for (const c of busy)
      c.socket.write(
        'POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
      )
    await new Promise((r) => setTimeout(r, 150))
    const extra = raw(port)
    const ms = await extra.closed
    expect(ms).toBeLessThan(2000)
    expect(extra.received()).toBe('')
  })
})
