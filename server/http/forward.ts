/**
 * Any instance serves any session (docs/scale-out.md, docs/decisions/0331-forwarding-through-redis.md;
 * the routing itself, shared with ACP, is core/session-router.ts):
 * with the Redis store, a command for a session (a turn, a message, cancel, a permission reply,
 * undo/redo, rename, a custom command, delete, the live snapshot) runs on the one instance that
 * holds the session's lease. Where it arrives, the instance claims the lease (a session nobody
 * runs is claimed by the instance that receives the command, which first takes it over: a fresh
 * copy, a turn its dead owner left open closed with an `error`); if another instance holds it,
 * the request itself — method, path, headers, body, and who it was authenticated as here (the
 * master token or a session's token: never the token itself) — is forwarded through Redis to
 * that instance, which answers it with its own app, and that answer is returned as is:
 * the same status codes and bodies as a local call. Waits are bounded: an owner that dies before
 * taking the request loses it to the next claim (its lease runs out, the request is withdrawn
 * and routed again); one that dies after taking it, or does not answer within
 * FORWARD_TIMEOUT_MS, is `503 service_unavailable` with `Retry-After`. Streams and reads are
 * not forwarded: every instance reads the store.
 */
import type { HttpOperationId } from '../../generated/http/routes.gen.ts'
import { ownerFailed, type SessionRouter } from '../core/session-router.ts'
import { readJsonBody } from '../../client/wire/http/body.ts'
import {
  HttpAnswerSchema,
  HttpRequestSchema,
  type HttpAnswer,
  type HttpRequest,
} from '../../generated/instances/forward.gen.ts'
import { markForwarded, type Principal } from './auth.ts'
import type { Logger } from '../log.ts'

/** The kind of payload an HTTP request travels as (session-router.ts). */
const HTTP_KIND = 'http'
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

/**
 * A request travels with its JSON body as read within the body limit and its principal instead of
 * its credentials; an answer with its bytes.
 */
async function toWire(msg: Request, json: unknown, principal?: Principal): Promise<HttpRequest>
async function toWire(msg: Response): Promise<HttpAnswer>
async function toWire(
  msg: Request | Response,
  json?: unknown,
  principal?: Principal,
): Promise<HttpRequest | HttpAnswer> {
  const bytes =
    msg instanceof Request
      ? Buffer.from(json === undefined ? '' : JSON.stringify(json))
      : Buffer.from(await msg.arrayBuffer())
  const body = bytes.toString('base64')
  const headers = [...msg.headers].filter(([k]) => k !== 'content-length' && k !== 'transfer-encoding')
  if (msg instanceof Response) return { status: msg.status, headers, body }
  const u = new URL(msg.url)
  return {
    method: msg.method,
    url: u.pathname + u.search,
    headers: headers.filter(([k]) => k !== 'authorization'),
    body,
    ...(principal ? { principal } : {}),
  }
}

const bodyOf = (w: HttpRequest | HttpAnswer): Uint8Array<ArrayBuffer> | undefined =>
  w.body ? new Uint8Array(Buffer.from(w.body, 'base64')) : undefined

/** Routes session commands to their owner; answers requests forwarded to this instance. */
export class CommandRouter {
  readonly #router: SessionRouter
  readonly #logger: Logger
  #app: { fetch(req: Request): Response | Promise<Response> } | undefined

  constructor(o: { router: SessionRouter; logger: Logger }) {
    this.#router = o.router
    this.#logger = o.logger
    o.router.serve(HTTP_KIND, (payload) => this.#serve(payload))
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
    principal?: Principal,
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
    return this.#router.route(id, {
      local: run,
      payload: async () => this.#router.envelope(HTTP_KIND, await toWire(req, json, principal)),
      answer: (reply) => {
        const r = HttpAnswerSchema.safeParse(reply)
        if (!r.success) throw ownerFailed(`the instance running session ${id} failed to answer; retry`)
        const a = r.data
        // The owner no longer holds the session: route again.
        if (a.headers.some(([k]) => k === NOT_OWNER_HEADER)) return undefined
        return new Response(bodyOf(a), { status: a.status, headers: a.headers })
      },
      // Forwarded here, but the lease moved on: the sender routes it again.
      ...(req.headers.get(FORWARDED_HEADER) !== null
        ? { notOwner: () => new Response(null, { status: 421, headers: { [NOT_OWNER_HEADER]: '1' } }) }
        : {}),
    })
  }

  /** A request another instance forwarded here: answered by this instance's own app. */
  async #serve(forwarded: unknown): Promise<HttpAnswer> {
    const r = HttpRequestSchema.safeParse(forwarded)
    if (!r.success || !this.#app) return { status: 421, headers: [[NOT_OWNER_HEADER, '1']], body: '' }
    const payload = r.data
    const headers = new Headers(payload.headers)
    headers.set(FORWARDED_HEADER, '1')
    const principal = payload.principal
    // The credentials stayed where the request arrived: a placeholder stands for them, and the
    // principal it was authenticated as there decides (auth.ts `markForwarded`).
    if (principal) headers.set('authorization', 'Bearer forwarded')
    const host = headers.get('host') ?? '127.0.0.1'
    const body = bodyOf(payload)
    const req = new Request(`http://${host}${payload.url}`, {
      method: payload.method,
      headers,
      ...(body && payload.method !== 'GET' && payload.method !== 'HEAD' ? { body } : {}),
    })
    if (principal) markForwarded(req, principal)
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
