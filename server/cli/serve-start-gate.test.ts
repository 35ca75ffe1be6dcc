/**
 * The HTTP server binds before its app is built (server/http/start-gate.ts): while the sessions it
 * serves are still starting (here: held by a gate the test opens), a plain liveness probe is
 * answered with the very bytes the app's route gives later, and every other request and WebSocket
 * upgrade waits for the app and is answered by it, the guards' refusals included. A start that
 * fails answers what waited with 503 and gives the port and the pidfile back.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http'
import { once } from 'node:events'
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { WebSocket } from 'ws'
import { createLogger } from '../log.ts'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import { pidfilePath } from '../store/pidfile.ts'
import { serveHttp, type ServedSessions } from './serve-http.ts'
import { StartGate, ioTurn } from '../http/start-gate.ts'
import { cliProcesses } from './fixtures/cli-process.ts'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'

const HOLD_LOADS = fileURLToPath(new URL('./fixtures/hold-loads.mjs', import.meta.url))

let env: TestEnv | undefined
let stop: AbortController | undefined
let serving: Promise<void> | undefined

afterEach(async () => {
  stop?.abort()
  await serving?.catch(() => {})
  await env?.cleanup()
  env = undefined
  stop = undefined
  serving = undefined
})

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** One request on its own connection; `headers` are sent as given (a Host, an Origin). */
function send(url: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, headers, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** The server with its sessions held until `open()`; `requests` counts what reached the Node server. */
async function gated(o: { pidfile?: boolean } = {}): Promise<{
  url: string
  server: Server
  port: number
  requests: () => number
  open: () => void
  fail: (err: Error) => void
}> {
  env = testEnv('chimera-start-gate-')
  stop = new AbortController()
  let release!: (s: ServedSessions) => void
  let refuse!: (err: Error) => void
  const starting = new Promise<ServedSessions>((resolve, reject) => {
    release = resolve
    refuse = reject
  })
  const e = env
  let listening!: (v: { url: string; server: Server }) => void
  const bound = new Promise<{ url: string; server: Server }>((r) => (listening = r))
  serving = serveHttp({
    agent: 'otter',
    host: '127.0.0.1',
    port: 0,
    version: 'test',
    logger: createLogger({ level: 'error' }),
    sessions: () => starting,
    signal: stop.signal,
    ...(o.pidfile ? { home: env.home } : {}),
    onListening: (url, server) => listening({ url, server }),
  })
  const { url, server } = await bound
  let count = 0
  server.on('request', () => count++)
  return {
    url,
    server,
    port: Number(new URL(url).port),
    requests: () => count,
    open: () => release({ manager: e.manager() }),
    fail: (err) => refuse(err),
  }
}

/** Resolves once `n` requests reached the server (the test's own gate, no timer). */
async function received(s: { server: Server; requests: () => number }, n: number): Promise<void> {
  while (s.requests() < n) await new Promise((r) => s.server.once('request', () => setImmediate(r)))
}

const comparable = (a: Answer) => {
  const { date: _date, ...headers } = a.headers
  return { status: a.status, headers, body: a.body }
}

describe('the HTTP server answers liveness while its sessions start', () => {
  it('GET /health and /healthz are answered before the app exists, with the bytes the app gives later', async () => {
    const s = await gated()
    const early = await send(s.url, 'GET', '/health')
    const earlyZ = await send(s.url, 'GET', '/healthz')
    expect(early.status).toBe(200)
    expect(JSON.parse(early.body)).toMatchObject({ status: 'ok', version: 'test' })
    expect(comparable(earlyZ)).toEqual(comparable(early))
    s.open()
    // A request that needs the app is answered once it is there: the app's /health after it.
    expect((await send(s.url, 'GET', '/sessions')).status).toBe(200)
    const late = await send(s.url, 'GET', '/health')
    expect(comparable(late)).toEqual(comparable(early))
  })

  it('every other request waits for the app and gets its answer, the guards included', async () => {
    const s = await gated()
    const list = send(s.url, 'GET', '/sessions')
    const head = send(s.url, 'HEAD', '/health')
    const rebound = send(s.url, 'GET', '/health', { host: 'evil.example' })
    const foreign = send(s.url, 'GET', '/health', { origin: 'http://evil.example' })
    const query = send(s.url, 'GET', '/health?probe=1')
    let settled = 0
    for (const p of [list, head, rebound, foreign, query]) void p.then(() => settled++)
    await received(s, 5)
    // A probe after them is answered while they still wait.
    expect((await send(s.url, 'GET', '/health')).status).toBe(200)
    expect(settled).toBe(0)
    s.open()
    expect((await list).status).toBe(200)
    expect((await head).status).toBe(405)
    const r = await rebound
    expect(r.status).toBe(421)
    expect(JSON.parse(r.body)).toMatchObject({ error: 'misdirected_request' })
    const f = await foreign
    expect(f.status).toBe(403)
    expect(JSON.parse(f.body)).toMatchObject({ error: 'origin_not_allowed' })
    expect((await query).status).toBe(200)
  })

  it('a WebSocket upgrade of /acp waits for the app, then opens', async () => {
    const s = await gated()
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/acp`)
    let opened = false
    const open = new Promise<void>((resolve, reject) => {
      ws.once('open', () => {
        opened = true
        resolve()
      })
      ws.once('error', reject)
    })
    // The upgrade request reached the server (and waits): a probe is still answered, nothing opened.
    await new Promise<void>((r) => s.server.once('upgrade', () => r()))
    expect((await send(s.url, 'GET', '/healthz')).status).toBe(200)
    expect(opened).toBe(false)
    s.open()
    await open
    ws.close()
  })

  it('a start that fails answers what waited with 503 and gives the port and the pidfile back', async () => {
    const s = await gated({ pidfile: true })
    const pid = pidfilePath(env!.home, 'otter', s.port)
    expect(existsSync(pid)).toBe(true)
    const waiting = send(s.url, 'POST', '/sessions')
    await received(s, 1)
    const ended = serving!.then(
      () => undefined,
      (err: unknown) => err,
    )
    s.fail(new Error('the agent could not start'))
    const w = await waiting
    expect(w.status).toBe(503)
    expect(JSON.parse(w.body)).toEqual({ error: 'service_unavailable', message: 'the server failed to start' })
    expect(String(await ended)).toContain('the agent could not start')
    expect(existsSync(pid)).toBe(false)
    const refused = await new Promise<string>((resolve) => {
      const c = connect(s.port, '127.0.0.1')
      c.once('connect', () => {
        c.destroy()
        resolve('connected')
      })
      c.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
    })
    expect(refused).toBe('ECONNREFUSED')
  })
})

describe('what waits for the app is bounded', () => {
  /** A bare gate on a Node server; `open()` hands over to an app that answers `app <url>`. */
  async function bareGate(maxWaiting: number) {
    const gate = new StartGate({ version: 'test', startedAt: new Date(), rule: { allowedHosts: [] }, maxWaiting })
    const server = createServer(gate.request)
    server.on('upgrade', gate.upgrade)
    let count = 0
    server.on('request', () => count++)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const port = (server.address() as AddressInfo).port
    bare.push(server)
    return {
      gate,
      server,
      port,
      url: `http://127.0.0.1:${port}`,
      requests: () => count,
      open: () =>
        gate.open({
          request: (req, res) => res.end(`app ${req.url}`),
          upgrade: (_req, socket) => socket.destroy(),
        }),
    }
  }
  const bare: Server[] = []
  afterEach(async () => {
    for (const s of bare.splice(0)) {
      s.closeAllConnections()
      await new Promise((r) => s.close(r))
    }
  })

  it('a few pipelined requests wait on their connection and are answered in order once the app is there', async () => {
    const s = await bareGate(8)
    const c = connect(s.port, '127.0.0.1')
    let got = ''
    c.setEncoding('utf8').on('data', (d: string) => (got += d))
    const req = (n: number) => `GET /r${n} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
    c.write([1, 2, 3, 4, 5].map(req).join(''))
    await received(s, 5)
    expect(got).toBe('')
    s.open()
    while ((got.match(/app \/r\d/g) ?? []).length < 5) await new Promise((r) => c.once('data', r))
    expect(got.match(/app \/r\d/g)).toEqual(['app /r1', 'app /r2', 'app /r3', 'app /r4', 'app /r5'])
    c.destroy()
  })

  it('a client pipelining a flood is cut off, its requests not held; other clients still wait their turn', async () => {
    const s = await bareGate(64)
    const other = send(s.url, 'GET', '/other')
    await received(s, 1)
    const c = connect(s.port, '127.0.0.1')
    const closed = new Promise<string>((resolve) => {
      let got = ''
      c.setEncoding('utf8').on('data', (d: string) => (got += d))
      // The server drops the connection (a reset, when it drops it with the flood unread).
      c.on('error', () => {})
      c.once('close', () => resolve(got))
    })
    c.write('GET /flood HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(2000))
    // Cut before the app exists, with no answer: nothing of it waits.
    expect(await closed).toBe('')
    s.open()
    expect((await other).body).toBe('app /other')
  })

  it('past the cap a new request is answered 503 at once and an upgrade is closed; those within it wait', async () => {
    const s = await bareGate(3)
    const waiting = [0, 1, 2].map((n) => send(s.url, 'GET', `/w${n}`))
    await received(s, 3)
    const over = await send(s.url, 'GET', '/over')
    expect(over.status).toBe(503)
    expect(over.headers['retry-after']).toBe('1')
    expect(over.headers.connection).toBe('close')
    expect(JSON.parse(over.body)).toMatchObject({ error: 'service_unavailable' })
    const ws = new WebSocket(`ws://127.0.0.1:${s.port}/acp`)
    const upgrade = await new Promise<string>((resolve) => {
      ws.once('open', () => resolve('opened'))
      ws.once('error', () => resolve('refused'))
    })
    expect(upgrade).toBe('refused')
    s.open()
    expect(await Promise.all(waiting.map(async (w) => (await w).body))).toEqual(['app /w0', 'app /w1', 'app /w2'])
  })
})

describe('otter serve stopped while its core loads', () => {
  const procs = cliProcesses()
  it('exits 0 without serving: what waited is answered 503, no session is written, the pidfile is gone', async () => {
    const home = procs.temp.make('chimera-gate-home-')
    const release = join(procs.temp.make('chimera-gate-release-'), 'open')
    const p = procs.startNode(
      ['--import', HOLD_LOADS, CLI_BUNDLE, 'otter', 'serve', '--port', '0'],
      // The agent core's chunk (scripts/bundles.mjs START_UP_PATHS: loaded by ACP, RPC and HTTP
      // alike, after the bind), held until the test opens the gate.
      {
        CHIMERA_HOME: home,
        CHIMERA_TEST_HOLD: 'chunks/start-acp-session_rpc_http-[\\w-]{8}\\.mjs$',
        CHIMERA_TEST_RELEASE: release,
      },
    )
    const url = (await p.waitStderr(/listening on (http:\/\/\S+)/)).match(/listening on (http:\/\/\S+)/)![1]!
    const port = Number(new URL(url).port)
    expect(existsSync(pidfilePath(home, 'otter', port))).toBe(true)
    const waiting = send(url, 'POST', '/session').catch((err: NodeJS.ErrnoException) => err.code ?? 'error')
    p.child.kill('SIGTERM')
    writeFileSync(release, '')
    // Answered "shutting down", or (when the server had not read it before it closed) cut: never run.
    const answer = await waiting
    if (typeof answer === 'string') expect(answer).toMatch(/ECONNRESET|EPIPE/)
    else {
      expect(answer.status).toBe(503)
      expect(JSON.parse(answer.body)).toMatchObject({
        error: 'service_unavailable',
        message: 'the server is shutting down',
      })
    }
    expect(await p.exit()).toBe(0)
    expect(existsSync(pidfilePath(home, 'otter', port))).toBe(false)
    const eventlog = join(home, 'eventlog')
    expect(existsSync(eventlog) ? readdirSync(eventlog).filter((f) => !f.startsWith('.')) : []).toEqual([])
  })
})

describe('the start in small steps', () => {
  it('an I/O turn between two loads reads what arrived during the first before the second begins', async () => {
    // A probe that arrives while one load runs is answered before the next (start-gate.ts `ioTurn`).
    const tcp = createTcpServer().listen(0, '127.0.0.1')
    await once(tcp, 'listening')
    const accepted = once(tcp, 'connection') as Promise<[Socket]>
    const client = connect((tcp.address() as AddressInfo).port, '127.0.0.1')
    await once(client, 'connect')
    const [peer] = await accepted
    const read: string[] = []
    peer.setEncoding('utf8').on('data', (d: string) => read.push(d))
    const seen: string[][] = []
    try {
      client.write('a') // arrives while the first load runs
      await ioTurn()
      seen.push([...read])
      client.write('b')
      await ioTurn()
      seen.push([...read])
      expect(seen).toEqual([['a'], ['a', 'b']])
    } finally {
      client.destroy()
      peer.destroy()
      await new Promise((r) => tcp.close(r))
    }
  })
})
