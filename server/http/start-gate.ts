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
import type { Duplex } from 'node:stream'
import { HttpError, errorBody } from '../../client/wire/http/errors.ts'
import { healthBody } from './health-body.ts'
import { hostAllowed, type HostRule } from './host-names.ts'

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
function writeJson(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, '', {
    'content-type': 'application/json',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}

export class StartGate {
  readonly #health: string
  readonly #rule: HostRule
  #app: GatedApp | undefined
  #settled = false
  #waiting: (() => void)[] = []

  constructor(o: { version: string; startedAt: Date; rule: HostRule }) {
    this.#health = JSON.stringify(healthBody(o))
    this.#rule = o.rule
  }

  /** The server's request listener: the app's once built, the liveness answer or a wait before. */
  readonly request: RequestListener = (req, res) => {
    if (this.#app) return this.#app.request(req, res)
    if (this.#liveness(req, res)) return
    this.#wait(() => {
      if (this.#app) this.#app.request(req, res)
      else
        writeJson(
          res,
          503,
          JSON.stringify(errorBody(new HttpError('service_unavailable', 'the server failed to start'))),
        )
    })
  }

  /** The server's `upgrade` listener (WebSocket `/acp`): the app's once built, a wait before. */
  readonly upgrade: UpgradeListener = (req, socket, head) => {
    if (this.#app) return this.#app.upgrade(req, socket, head)
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

  /** The app could not be built: what waited is answered 503 (upgrades closed). */
  fail(): void {
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
