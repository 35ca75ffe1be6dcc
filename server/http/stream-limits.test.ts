/**
 * One caller cannot take every stream or connection (sse/registry.ts, slow-clients.ts), over a
 * real socket: a session token's streams past its limit are `429 too_many_streams` with the limit
 * in the message, while the master token still streams and gets answers and `/health` answers;
 * an open server limits streams per session and in all; sockets that never send a request give
 * way to new clients at the connection cap and are closed after the header limit.
 */
import { createServer, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from '../log.ts'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import { nodeHandler } from './node-handler.ts'
import { createHttpServerApp, type HttpServerApp } from './server-app.ts'
import type { StreamLimits } from './sse/registry.ts'
import { guardSlowClients } from './slow-clients.ts'

let env: TestEnv | undefined
let server: Server | undefined
let http: HttpServerApp | undefined
const aborts: AbortController[] = []
const sockets: Socket[] = []
/**
 * The open streams' responses, held until the test ends: a Response nothing refers to may be
 * collected, and fetch then cancels its body, which closes the stream (and frees its place).
 */
const held: Response[] = []

afterEach(async () => {
  for (const a of aborts.splice(0)) a.abort()
  for (const s of sockets.splice(0)) s.destroy()
  held.length = 0
  http?.close()
  server?.closeAllConnections()
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()))
  await env?.cleanup()
  server = http = env = undefined
})

const MASTER = 'master-secret'
const LIMITS: StreamLimits = { perSession: 4, perToken: 3, total: 6, masterTotal: 9 }

async function start(masterToken: string | undefined, maxConnections = 64, headersMs = 5000): Promise<string> {
  env = testEnv('chimera-stream-limits-')
  http = createHttpServerApp({
    version: 't',
    startedAt: new Date(),
    logger: createLogger({ level: 'error', sink: () => {} }),
    manager: env.manager(),
    masterToken,
    streamLimits: LIMITS,
  })
  server = createServer(nodeHandler(http.app))
  guardSlowClients(server, { headersMs, bodyMs: 5000, maxConnections })
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {})

async function newSession(url: string, token?: string): Promise<{ id: string; token: string }> {
  const r = await fetch(`${url}/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(token) },
    body: '{}',
  })
  expect(r.status).toBe(201)
  const b = (await r.json()) as { session_id: string; session_token: string }
  return { id: b.session_id, token: b.session_token }
}

/** Open a stream and keep it open (its status, and for a refusal its body). */
async function open(
  url: string,
  path: string,
  token?: string,
): Promise<{ status: number; body?: { error: string; message: string }; retryAfter: string | null }> {
  const ac = new AbortController()
  aborts.push(ac)
  const r = await fetch(`${url}${path}`, { headers: auth(token), signal: ac.signal })
  if (r.status === 200) {
    held.push(r)
    return { status: 200, retryAfter: null }
  }
  return {
    status: r.status,
    body: (await r.json()) as { error: string; message: string },
    retryAfter: r.headers.get('retry-after'),
  }
}

describe('stream limits', () => {
  it('a session token past its limit gets 429 too_many_streams; the master token still streams and is answered, /health answers', async () => {
    const url = await start(MASTER)
    const s = await newSession(url, MASTER)
    const results = []
    for (let i = 0; i < 10; i++) results.push(await open(url, `/session/${s.id}/events`, s.token))
    const accepted = results.filter((r) => r.status === 200).length
    const refused = results.filter((r) => r.status === 429)
    expect(accepted).toBe(LIMITS.perToken)
    expect(refused).toHaveLength(10 - LIMITS.perToken)
    expect(refused[0]).toMatchObject({
      body: { error: 'too_many_streams', message: expect.stringContaining('limit per token') },
      retryAfter: '5',
    })
    // The master token is not counted against the session's callers: it still streams, and gets answers.
    expect((await open(url, `/session/${s.id}/events`, MASTER)).status).toBe(200)
    expect((await fetch(`${url}/session/${s.id}`, { headers: auth(MASTER) })).status).toBe(200)
    expect((await fetch(`${url}/health`)).status).toBe(200)
    // Session tokens of other sessions fill the rest of the guests' total; the master keeps its room.
    const others = [await newSession(url, MASTER), await newSession(url, MASTER)]
    const more = []
    for (const o of others) for (let i = 0; i < 3; i++) more.push(await open(url, `/session/${o.id}/events`, o.token))
    expect(more.map((r) => r.status)).toEqual([200, 200, 200, 429, 429, 429])
    expect(more[3]!.body!.message).toContain('its limit')
    // 6 guest streams + 1 of the master's: the master goes on to its own total (9).
    for (let i = 0; i < 2; i++) expect((await open(url, `/sessions/${s.id}/events?from=live`, MASTER)).status).toBe(200)
    expect((await open(url, `/sessions/${s.id}/events?from=live`, MASTER)).body!.error).toBe('too_many_streams')
  })

  it('an open server (no token): streams per session are limited; another session still streams', async () => {
    const url = await start(undefined)
    const a = await newSession(url)
    const b = await newSession(url)
    const got = []
    for (let i = 0; i < 6; i++) got.push((await open(url, `/session/${a.id}/events`)).status)
    expect(got).toEqual([200, 200, 200, 200, 429, 429])
    expect((await open(url, `/session/${b.id}/events`)).status).toBe(200)
  })

  it('a released stream frees its place', async () => {
    const url = await start(MASTER)
    const s = await newSession(url, MASTER)
    for (let i = 0; i < 3; i++) expect((await open(url, `/session/${s.id}/events`, s.token)).status).toBe(200)
    expect((await open(url, `/session/${s.id}/events`, s.token)).status).toBe(429)
    aborts[0]!.abort()
    await new Promise((r) => setTimeout(r, 200))
    expect((await open(url, `/session/${s.id}/events`, s.token)).status).toBe(200)
  })

  it('idle sockets at the connection cap give way to /health, and are closed after the header limit', async () => {
    const url = await start(MASTER, 10, 500)
    const port = Number(new URL(url).port)
    const closed: Promise<void>[] = []
    for (let i = 0; i < 30; i++) {
      const c = connect(port, '127.0.0.1')
      c.on('error', () => {})
      sockets.push(c)
      closed.push(new Promise((r) => c.on('close', () => r())))
    }
    await new Promise((r) => setTimeout(r, 100))
    expect((await fetch(`${url}/health`)).status).toBe(200)
    const t0 = Date.now()
    await Promise.all(closed)
    expect(Date.now() - t0).toBeLessThan(3000)
  })
})
