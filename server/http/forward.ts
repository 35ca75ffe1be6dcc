/**
 * Any instance serves any session (docs/scale-out.md, docs/decisions/0331-forwarding-through-redis.md):
 * with the Redis store, a command for a session (a turn, a message, cancel, a permission reply,
 * undo/redo, rename, a custom command, delete, the live snapshot) runs on the one instance that
 * holds the session's lease. Where it arrives, the instance claims the lease (a session nobody
 * runs is claimed by the instance that receives the command, which first takes it over: a fresh
 * copy, a turn its dead owner left open closed with an `error`); if another instance holds it,
 * the request itself — method, path, headers (its credentials), body — is forwarded through
 * Redis to that instance, which answers it with its own app, and that answer is returned as is:
 * the same status codes and bodies as a local call. Waits are bounded: an owner that dies before
 * taking the request loses it to the next claim (its lease runs out, the request is withdrawn
 * and routed again); one that dies after taking it, or does not answer within the forward
 * timeout (FORWARD_TIMEOUT_MS, `CHIMERA_FORWARD_TIMEOUT_MS`), is `503 service_unavailable` with
 * `Retry-After` and a message that says whether the command may have run (taken, unanswered) or
 * did not run (still in the owner's inbox, withdrawn). Streams and reads are not forwarded:
 * every instance reads the store.
 */
import type { HttpOperationId } from '../../generated/http/routes.gen.ts'
import type { SessionManager } from '../core/manager.ts'
import { readJsonBody } from '../../client/wire/http/body.ts'
import { ChimeraError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { BusRequestOptions, BusResult } from '../store/redis-bus.ts'
import type { SessionLeases } from '../store/types.ts'

/** How long a forwarded command may wait for its owner's answer by default (`CHIMERA_FORWARD_TIMEOUT_MS`). */
export const FORWARD_TIMEOUT_MS = 30_000
/** How often a waiting requester checks that the owner still holds the session. */
const POLL_MS = 250
/** Claim-or-forward rounds before giving up (the owner changed under each). */
const ROUNDS = 4
/** Set on a forwarded request: the instance it came from (the receiver never forwards it again). */
export const FORWARDED_HEADER = 'x-chimera-forwarded-from'
/** Set on the answer of an instance that no longer holds the session: route again. */
const NOT_OWNER_HEADER = 'x-chimera-not-owner'

/** Where each session command names its session: the path's `{id}`, or the body's `session_id`. */
const SESSION_COMMANDS: Partial<Record<HttpOperationId, 'path' | 'body'>> = {
  'sessions.addTurn': 'path',
  'sessions.cancel': 'path',
  'sessions.rename': 'path',
  'sessions.undo': 'path',
  'sessions.redo': 'path',
  'session.get': 'path',
  'session.sendMessage': 'path',
  'session.cancel': 'path',
  'session.delete': 'path',
  'session.undo': 'path',
  'session.redo': 'path',
  'tool.approve': 'body',
  'commands.invoke': 'body',
}

/** The forwarding channel (redis-bus.ts `RedisBus`). */
export interface Forwarder {
  request(target: string, payload: unknown, opts: BusRequestOptions): Promise<BusResult>
}

export interface ForwardingOptions {
  leases: SessionLeases
  /** How long a forwarded command waits for its owner's answer (ms; default FORWARD_TIMEOUT_MS). */
  timeoutMs?: number
  /** Open the channel; requests addressed to this instance go to `handle`. */
  connect(handle: (payload: unknown) => Promise<unknown>): Forwarder
}

/** A request or an answer as it travels through Redis. */
interface WireMessage {
  status?: number
  method?: string
  url?: string
  headers: [string, string][]
  body: string
}

/** A request travels with its JSON body as read within the body limit; an answer with its bytes. */
async function toWire(msg: Request | Response, json?: unknown): Promise<WireMessage> {
  const bytes =
    msg instanceof Request
      ? Buffer.from(json === undefined ? '' : JSON.stringify(json))
      : Buffer.from(await msg.arrayBuffer())
  const body = bytes.toString('base64')
  const headers = [...msg.headers].filter(([k]) => k !== 'content-length' && k !== 'transfer-encoding')
  if (msg instanceof Response) return { status: msg.status, headers, body }
  const u = new URL(msg.url)
  return { method: msg.method, url: u.pathname + u.search, headers, body }
}

function isWire(x: unknown): x is WireMessage {
  return typeof x === 'object' && x !== null && Array.isArray((x as WireMessage).headers)
}

const bodyOf = (w: WireMessage): Uint8Array<ArrayBuffer> | undefined =>
  w.body ? new Uint8Array(Buffer.from(w.body, 'base64')) : undefined

/** Routes session commands to their owner; answers requests forwarded to this instance. */
export class CommandRouter {
  readonly #leases: SessionLeases
  readonly #manager: SessionManager
  readonly #logger: Logger
  readonly #forwarder: Forwarder
  readonly #timeoutMs: number
  #app: { fetch(req: Request): Response | Promise<Response> } | undefined

  constructor(o: ForwardingOptions & { manager: SessionManager; logger: Logger }) {
    this.#leases = o.leases
    this.#manager = o.manager
    this.#logger = o.logger
    this.#timeoutMs = o.timeoutMs ?? FORWARD_TIMEOUT_MS
    this.#forwarder = o.connect((payload) => this.#serve(payload))
  }

  /** The app that answers forwarded requests (set once it is built). */
  attach(app: { fetch(req: Request): Response | Promise<Response> }): void {
    this.#app = app
  }

  /** Run `run` here when this instance holds (or can claim) the session, else answer with the owner's answer. */
  async dispatch(
    req: Request,
    operationId: HttpOperationId,
    params: Record<string, string>,
    run: () => Promise<Response>,
  ): Promise<Response> {
    const where = SESSION_COMMANDS[operationId]
    if (!where) return run()
    // The body within the limit, read once (a body the operation refuses — too large, not JSON —
    // is refused here, where it arrived, by running it).
    let json: unknown
    try {
      json = await readJsonBody(req.clone())
    } catch {
      return run()
    }
    const id = where === 'path' ? params.id : bodySessionId(json)
    if (id === undefined) return run()
    const forwardedFrom = req.headers.get(FORWARDED_HEADER)
    let payload: WireMessage | undefined
    for (let round = 0; round < ROUNDS; round++) {
      const claim = await this.#leases.claim(id)
      if (claim.kind === 'none') return run()
      if (claim.kind === 'mine')
        // In use from the claim on: the idle release cannot slip in before the command runs.
        return this.#leases.using(id, async () => {
          if (claim.fresh) await this.#manager.takeOver(id, claim.length)
          else await this.#manager.get(id).catch(() => {})
          return run()
        })
      // Forwarded here, but the lease moved on: the sender routes it again.
      if (forwardedFrom !== null) return new Response(null, { status: 421, headers: { [NOT_OWNER_HEADER]: '1' } })
      payload ??= await toWire(req, json)
      const owner = claim.owner
      const r = await this.#forwarder.request(owner, payload, {
        ownerAlive: async () => (await this.#leases.owner(id)) === owner,
        ownerRunning: () => this.#leases.instanceAlive(owner),
        timeoutMs: this.#timeoutMs,
        pollMs: POLL_MS,
      })
      if (r.kind === 'withdrawn') continue
      if (r.kind === 'lost')
        throw ownerFailed(
          `the instance running session ${id} stopped while handling this request (it may or may not have taken effect); retry`,
        )
      if (r.kind === 'timeout')
        throw ownerFailed(
          `the instance running session ${id} did not answer within ${this.#timeoutMs / 1000} s (${r.ran ? 'it had taken the request: it may or may not have taken effect' : 'it had not taken the request, which was withdrawn: it did not take effect'}); retry`,
        )
      if (!isWire(r.payload)) throw ownerFailed(`the instance running session ${id} failed to answer; retry`)
      if (r.payload.headers.some(([k]) => k === NOT_OWNER_HEADER)) continue
      return new Response(bodyOf(r.payload), { status: r.payload.status ?? 500, headers: r.payload.headers })
    }
    throw ownerFailed(`session ${id} changed hands ${ROUNDS} times while this request was routed; retry`)
  }

  /** A request another instance forwarded here: answered by this instance's own app. */
  async #serve(payload: unknown): Promise<WireMessage> {
    if (!isWire(payload) || !this.#app || !payload.method || !payload.url)
      return { status: 421, headers: [[NOT_OWNER_HEADER, '1']], body: '' }
    const headers = new Headers(payload.headers)
    headers.set(FORWARDED_HEADER, '1')
    const host = headers.get('host') ?? '127.0.0.1'
    const body = bodyOf(payload)
    const req = new Request(`http://${host}${payload.url}`, {
      method: payload.method,
      headers,
      ...(body && payload.method !== 'GET' && payload.method !== 'HEAD' ? { body } : {}),
    })
    try {
      return await toWire(await this.#app.fetch(req))
    } catch (err) {
      this.#logger.error('a forwarded request failed', err)
      return { status: 500, headers: [['content-type', 'application/json']], body: '' }
    }
  }
}

/** The body's `session_id` (approve, a custom command). */
function bodySessionId(json: unknown): string | undefined {
  const v = typeof json === 'object' && json !== null ? (json as { session_id?: unknown }).session_id : undefined
  return typeof v === 'string' ? v : undefined
}

const ownerFailed = (message: string): ChimeraError =>
  new ChimeraError('store_unavailable', message, { detail: { retry_after_s: 2 } })
