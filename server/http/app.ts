/**
 * The HTTP surface as an h3 app, built from the generated operation table: one route per spec
 * path, and for each operation the same pipeline — bearer auth per the operation's security
 * tiers (auth.ts), path/query/body validation with the generated validators, then the
 * operation's handler. Every operation has a handler (the type says so); unknown paths answer
 * 404, a known path with another method 405 with `Allow`. Where the document names a specific
 * error for a bad body, an operation's `bodyError` maps the validation failure to it. Handlers
 * never see h3 types.
 */
import { H3, HTTPError } from 'h3'
import type { ZodType } from 'zod'
import { httpOperations, type HttpOperationId, type OperationInput } from '../../generated/http/routes.gen.ts'
import { sessionNotFound, type ChimeraError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { formatIssues, issueRows } from '../validation.ts'
import { authorize } from './auth.ts'
import type { SessionTokens } from './session-tokens.ts'
import { readJsonBody } from './body.ts'
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
/** The pipeline's erased view: input was validated against the operation's own schemas first. */
type ErasedHandler = (input: {
  path: unknown
  query: unknown
  body: unknown
  req: Request
}) => Response | Promise<Response>
/** Maps a body that failed its schema to the document's error for that operation, if it names one. */
export type BodyErrorMapper = (raw: unknown) => HttpError | ChimeraError | undefined

export interface HttpAppOptions {
  handlers: OperationHandlers
  logger: Logger
  /** Master bearer token; undefined = auth off. */
  masterToken?: string
  /** Per-session tokens (the `sessionToken` tier). */
  tokens?: SessionTokens
  bodyErrors?: Partial<Record<HttpOperationId, BodyErrorMapper>>
  /** Runs before every routed request (opportunistic idle eviction). */
  onRequest?: () => void
  /** CORS allow-list and Host check (defaults: no origins, loopback hosts only). */
  guard?: GuardOptions
}

type Operation = (typeof httpOperations)[HttpOperationId]

/** Query strings are text; coerce the keys the schema wants as numbers or booleans, then parse. */
function parseQuery(schema: ZodType, raw: Record<string, string>): ReturnType<ZodType['safeParse']> {
  const first = schema.safeParse(raw)
  if (first.success) return first
  const coerced: Record<string, unknown> = { ...raw }
  for (const issue of first.error.issues) {
    const key = String(issue.path[0] ?? '')
    const expected = (issue as { expected?: string }).expected
    if (!(key in raw) || issue.code !== 'invalid_type') continue
    if (expected === 'number' && /^-?\d+(\.\d+)?$/.test(raw[key]!)) coerced[key] = Number(raw[key])
    if (expected === 'boolean' && (raw[key] === 'true' || raw[key] === 'false')) coerced[key] = raw[key] === 'true'
  }
  return schema.safeParse(coerced)
}

async function runOperation(
  op: Operation,
  handler: ErasedHandler,
  req: Request,
  params: Record<string, string>,
  opts: HttpAppOptions,
): Promise<Response> {
  authorize(req, op.security, params.id, { masterToken: opts.masterToken, tokens: opts.tokens })
  let path: Record<string, unknown> = {}
  if (op.pathParams) {
    const r = op.pathParams.safeParse(params)
    if (!r.success) {
      throw 'id' in params
        ? sessionNotFound(params.id!)
        : new HttpError('not_found', 'no such resource', { detail: issueRows(r.error) })
    }
    path = r.data as Record<string, unknown>
  }
  let query: Record<string, unknown> = {}
  if (op.query) {
    const raw = Object.fromEntries(new URL(req.url).searchParams)
    const r = parseQuery(op.query, raw)
    if (!r.success)
      throw new HttpError('invalid_query', `malformed query parameter: ${formatIssues(r.error!)}`, {
        detail: issueRows(r.error!),
      })
    query = r.data as Record<string, unknown>
  }
  let body: unknown
  if (op.body) {
    const raw = await readJsonBody(req)
    const mapped = (): HttpError | ChimeraError | undefined =>
      opts.bodyErrors?.[op.operationId as HttpOperationId]?.(raw)
    if (raw === undefined && op.body.required)
      throw mapped() ?? new HttpError('invalid_body', 'a JSON request body is required')
    if (raw !== undefined) {
      const r = op.body.schema.safeParse(raw)
      if (!r.success)
        throw (
          mapped() ??
          new HttpError('invalid_body', 'request body does not match the schema', { detail: issueRows(r.error) })
        )
      body = r.data
    }
  }
  return handler({ path, query, body, req })
}

/** Percent-decoded path parameters; a malformed escape is an unknown resource, not a crash. */
function decodeParams(raw: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(raw)) {
    try {
      out[k] = decodeURIComponent(String(v))
    } catch {
      throw k === 'id' ? sessionNotFound(String(v)) : new HttpError('not_found', `malformed ${k} in the path`)
    }
  }
  return out
}

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
  const byRoute = new Map<string, Operation[]>()
  for (const op of Object.values(httpOperations) as Operation[]) {
    byRoute.set(op.route, [...(byRoute.get(op.route) ?? []), op])
  }
  for (const [route, ops] of byRoute) {
    const allow = ops.map((o) => o.method).join(', ')
    app.all(route, async (event) => {
      const req = event.req as Request
      const op = ops.find((o) => o.method === req.method)
      let cors: Record<string, string> = {}
      try {
        checkHost(req, guard)
        // The router ignores a trailing slash; the spec has no such paths (`/sessions/` is not `/sessions`).
        const pathname = event.url.pathname
        if (pathname.length > 1 && pathname.endsWith('/'))
          throw new HttpError('not_found', `no route for ${req.method} ${pathname.slice(0, 200)}`)
        if (req.method === 'OPTIONS' && req.headers.get('origin') !== null) return preflight(req, guard, allow)
        cors = corsHeaders(req, guard)
        if (!op)
          throw new HttpError('method_not_allowed', `${req.method} is not allowed on ${route}`, {
            headers: { allow },
          })
        opts.onRequest?.()
        const params = decodeParams(event.context.params ?? {})
        return withHeaders(
          await runOperation(op, opts.handlers[op.operationId as HttpOperationId] as ErasedHandler, req, params, opts),
          cors,
        )
      } catch (err) {
        return withHeaders(errorResponse(err, opts.logger), cors)
      }
    })
  }
  // The web console's static files (server/http/ui.ts).
  mountUi(app, guard, opts.logger)
  // The API reference at /docs and `GET /` → /ui (server/http/docs.ts).
  mountDocs(app, guard, opts.logger)
  app.all('/**', (event) => {
    try {
      checkHost(event.req as Request, guard)
      return errorResponse(
        new HttpError('not_found', `no route for ${event.req.method} ${new URL(event.req.url).pathname}`),
        opts.logger,
      )
    } catch (err) {
      return errorResponse(err, opts.logger)
    }
  })
  return app
}
