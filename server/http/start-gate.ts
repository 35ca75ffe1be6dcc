/**
 * The HTTP server's listeners from the moment it binds until its app is built
 * (docs/decisions/0445-listen-before-the-app-loads.md). `chimera otter serve` binds first and
 * loads the agent core and the app after: until then a liveness probe (`GET /health`,
 * `GET /healthz` with an acceptable Host and no Origin: the plain probe a load balancer or a
 * script sends) is answered here, with the same bytes the app's route gives, and every other
 * request and WebSocket upgrade waits and goes to the app once it is there. Nothing is refused
 * here: a request this gate is unsure of (another method, a query, a browser's Origin, a Host the
 * DNS-rebinding guard would refuse) waits for the app, which answers it as always. When the app
 * cannot be built, the waiting requests get 503 `service_unavailable` and upgrades are closed.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { HttpError, errorBody } from '../../client/wire/http/errors.ts'
import { healthBody } from './health-body.ts'
import { hostAllowed, type HostRule } from './host-names.ts'
import { JSON_HEADERS } from './json-headers.ts'

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void

/** What the gate hands over to once the app is built. */
export interface GatedApp {
  request: RequestListener
  upgrade: UpgradeListener
}

/**
 * Resolves after a whole turn of the event loop, an I/O poll included. Node 22 and later load an
 * `import()`'s module graph synchronously, so nothing is answered while one loads: awaited
 * between the loads of a start, it lets the gate answer a probe that arrived meanwhile.
 */
export const ioTurn = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)))

const LIVENESS_PATHS = new Set(['/health', '/healthz'])

/** A JSON answer with the headers the app's JSON answers carry (server/http/errors.ts `jsonResponse`). */
function writeJson(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, '', { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text), ...extra })
  res.end(text)
}

/** A 503 `service_unavailable` that closes its connection (the server is not serving it). */
function unavailable(res: ServerResponse, message: string, retry = false): void {
  const body = JSON.stringify(errorBody(new HttpError('service_unavailable', message)))
  writeJson(res, 503, body, { connection: 'close', ...(retry ? { 'retry-after': '1' } : {}) })
}

/** How many requests one connection may have waiting (a client pipelining before the app is there). */
export const MAX_WAITING_PER_SOCKET = 16

export class StartGate {
  readonly #health: string
  readonly #rule: HostRule
  readonly #max: number
  #app: GatedApp | undefined
  #settled = false
  #why = 'the server failed to start'
  #waiting: (() => void)[] = []
  /** Sockets not read while requests of theirs wait, and how many wait. */
  readonly #paused = new Map<Socket, number>()

  /** `maxWaiting`: how many requests and upgrades may wait for the app at most (the server's connection cap). */
  constructor(o: { version: string; startedAt: Date; rule: HostRule; maxWaiting: number }) {
    this.#health = JSON.stringify(healthBody(o))
    this.#rule = o.rule
    this.#max = o.maxWaiting
  }

  /** The server's request listener: the app's once built, the liveness answer or a wait before. */
  readonly request: RequestListener = (req, res) => {
    if (this.#app) return this.#app.request(req, res)
    if (this.#liveness(req, res)) return
    const socket = req.socket
    if (socket.destroyed) return
    const held = this.#paused.get(socket) ?? 0
    if (held >= MAX_WAITING_PER_SOCKET || this.#waiting.length >= this.#max) {
      // A flood while the app loads. A new connection is answered now; one with requests waiting
      // cannot be answered before them, so it is dropped (its requests are not held).
      if (held > 0) return void socket.destroy()
      return unavailable(res, 'the server is starting; retry', true)
    }
    // Nothing is written back while a request waits, so Node would go on reading and parsing what
    // a client pipelines behind it: its socket is not read until the app takes over.
    if (held === 0) socket.pause()
    this.#paused.set(socket, held + 1)
    this.#wait(() => {
      if (this.#app) this.#app.request(req, res)
      else unavailable(res, this.#why)
    })
  }

  /** The server's `upgrade` listener (WebSocket `/acp`): the app's once built, a wait before (within the cap). */
  readonly upgrade: UpgradeListener = (req, socket, head) => {
    if (this.#app) return this.#app.upgrade(req, socket, head)
    if (this.#waiting.length >= this.#max) return void socket.destroy()
    this.#wait(() => {
      if (this.#app) this.#app.upgrade(req, socket, head)
      else socket.destroy()
    })
  }

  /** The app is built: what waited goes to it, in the order it arrived. */
  open(app: GatedApp): void {
    this.#app = app
    this.#release()
  }

  /**
   * The app will not be built (its start failed, or the server is stopping): what waited is
   * answered 503 with `message`, and upgrades are closed.
   */
  fail(message = this.#why): void {
    this.#why = message
    this.#release()
  }

  #wait(go: () => void): void {
    if (this.#settled) go()
    else this.#waiting.push(go)
  }

  #release(): void {
    this.#settled = true
    const waiting = this.#waiting
    this.#waiting = []
    for (const go of waiting) go()
    for (const socket of this.#paused.keys()) if (!socket.destroyed) socket.resume()
    this.#paused.clear()
  }
  /** Answers a plain liveness probe; false when the request is anything else. */
  #liveness(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' || !LIVENESS_PATHS.has(req.url ?? '') || req.headers.origin !== undefined) return false
    const host = req.headers.host
    let hosts = 0
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++
    if (host === undefined || hosts !== 1 || !hostAllowed(host, this.#rule)) return false
    writeJson(res, 200, this.#health)
    return true
  }
}
