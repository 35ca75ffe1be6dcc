/**
 * The HTTP surface as an h3 app, built from the generated operation table: one route per spec
 * path, and for each operation the operation pipeline the msw mock runs too
 * (client/wire/http/pipeline.ts) — bearer auth per the operation's security tiers (auth.ts),
 * path/query/body validation with the generated validators, the document's named body errors,
 * then the operation's handler. Every operation has a handler (the type says so); unknown paths
 * answer 404, a known path with another method 405 with `Allow`. Handlers never see h3 types.
 */
import { H3, HTTPError } from 'h3'
import type { HttpOperationId, OperationInput } from '../../generated/http/routes.gen.ts'
import type { Logger } from '../log.ts'
import {
  allowOf,
  decodeParams,
  noRoute,
  operationFor,
  operationsByRoute,
  runOperation,
  type ErasedHandler,
} from '../../client/wire/http/pipeline.ts'
import { authorizeTiers, principalOf, tokenCheck, type Principal } from './auth.ts'
import type { TokenRegistry } from './session-tokens.ts'
import { HttpError, errorResponse } from './errors.ts'
import { checkHost, corsHeaders, preflight, type GuardOptions } from './guard.ts'
import { mountDocs } from './docs.ts'
import { mountUi } from './ui.ts'

/** The validated input of one operation, typed from its generated validators (generated/http/routes.gen.ts). */
export type { OperationInput }
export type OperationHandler<K extends HttpOperationId = HttpOperationId> = (
  input: OperationInput<K>,
) => Response | Promise<Response>
/** One handler per operation of the spec, each over its own typed input. */
export type OperationHandlers = { [K in HttpOperationId]: OperationHandler<K> }

export interface HttpAppOptions {
  handlers: OperationHandlers
  logger: Logger
  /** Master bearer token; undefined = auth off. */
  masterToken?: string
  /** Per-session tokens (the `sessionToken` tier): in memory, or shared through the store. */
  tokens?: TokenRegistry
  /** Runs before every routed request (opportunistic idle eviction). */
  onRequest?: () => void
  /** CORS allow-list and Host check (defaults: no origins, loopback hosts only). */
  guard?: GuardOptions
  /** Routes outside the spec's operation table (`/acp`: server/http/acp-endpoint.ts), by exact path. */
  extraRoutes?: Record<string, (req: Request) => Promise<Response>>
  /**
   * Runs each operation (`run`) or answers it otherwise: with several instances, a session
   * command goes to the instance that runs the session (forward.ts `CommandRouter.dispatch`),
   * as `principal` (who the request was authenticated as here; undefined with auth off).
   */
  dispatch?: (
    req: Request,
    operationId: HttpOperationId,
    params: Record<string, string>,
    run: () => Promise<Response>,
    principal: Principal | undefined,
  ) => Promise<Response>
}

/** The check of an open operation (`security: []`): nothing to look up. */
const OPEN = { isMaster: undefined }

/** Adds headers to a response (CORS on every answer to an allowed origin). */
function withHeaders(res: Response, headers: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v)
  return res
}

export function createHttpApp(opts: HttpAppOptions): H3 {
  const guard: GuardOptions = opts.guard ?? { cors: [], allowedHosts: [] }
  const app = new H3({
    silent: true,
    // A malformed escape (`/sessions/%E0%A4%A`) reaches the routes: decodeParams answers it as
    // an unknown resource (404), the same as any other id no session can have.
    allowMalformedURL: true,
    onError: (error: HTTPError) => {
      // Errors raised by h3 itself before routing (e.g. a malformed percent-encoded path).
      const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500
      return status === 500
        ? errorResponse(error, opts.logger)
        : errorResponse(new HttpError(status === 404 ? 'not_found' : 'bad_request', error.message), opts.logger, status)
    },
  })
  const auth = { masterToken: opts.masterToken, tokens: opts.tokens }
  for (const route of operationsByRoute.keys()) {
    const allow = allowOf(route)
    app.all(route, async (event) => {
      const req = event.req as Request
      let cors: Record<string, string> = {}
      try {
        checkHost(req, guard)
        // The router ignores a trailing slash; the spec has no such paths (`/sessions/` is not `/sessions`).
        const pathname = event.url.pathname
        if (pathname.length > 1 && pathname.endsWith('/')) throw noRoute(req.method, pathname)
        if (req.method === 'OPTIONS' && req.headers.get('origin') !== null) return preflight(req, guard, allow)
        cors = corsHeaders(req, guard)
        const op = operationFor(route, req.method)
        opts.onRequest?.()
        const params = decodeParams(event.context.params ?? {})
        const handler = opts.handlers[op.operationId as HttpOperationId] as ErasedHandler
        // The token's session is looked up once (in the store, with shared tokens), only when the
        // operation needs a token at all.
        const pending = op.security.length === 0 ? OPEN : tokenCheck(req, auth)
        const check = pending instanceof Promise ? await pending : pending
        const pipeline = {
          authorize: (r: Request, security: readonly string[], id: string | undefined) =>
            authorizeTiers(r, security, id, check),
        }
        const run = (): Promise<Response> => runOperation(op, handler, req, params, pipeline)
        // Who asks is checked where the request arrives, before it may be routed to another instance.
        if (opts.dispatch) pipeline.authorize(req, op.security, params.id)
        const res = opts.dispatch
          ? await opts.dispatch(req, op.operationId as HttpOperationId, params, run, principalOf(req, check))
          : await run()
        return withHeaders(res, cors)
      } catch (err) {
        return withHeaders(errorResponse(err, opts.logger), cors)
      }
    })
  }
  for (const [path, handle] of Object.entries(opts.extraRoutes ?? {}))
    app.all(path, (event) => handle(event.req as Request))
  // The web console's static files (server/http/ui.ts).
  mountUi(app, guard, opts.logger)
  // The API reference at /docs and `GET /` → /ui (server/http/docs.ts).
  mountDocs(app, guard, opts.logger)
  app.all('/**', (event) => {
    try {
      checkHost(event.req as Request, guard)
      return errorResponse(noRoute(event.req.method, new URL(event.req.url).pathname), opts.logger)
    } catch (err) {
      return errorResponse(err, opts.logger)
    }
  })
  return app
}
