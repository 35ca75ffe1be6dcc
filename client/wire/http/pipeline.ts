/**
 * The HTTP operation pipeline, built from the generated operation table
 * (generated/http/routes.gen.ts) and run by both the server (server/http/app.ts, over h3) and
 * the msw mock (client/msw/handlers.ts, over its in-memory state), so the two cannot disagree
 * about a request: route matching (404 `not_found`, 405 `method_not_allowed` with `Allow`),
 * bearer tiers (auth.ts), percent-decoded path parameters, path/query/body validation with the
 * generated validators (404 `session_not_found`, 400 `invalid_query` / `invalid_body`, 415,
 * 413), the document's named body errors (body-errors.ts), then the operation's handler with its
 * typed input. Errors are HttpError, answered as the spec's ErrorBody (errors.ts). No Node API:
 * the mock runs in browsers too.
 */
import type { ZodType } from 'zod'
import { httpOperations, type HttpOperationId, type OperationInput } from '../../../generated/http/routes.gen.ts'
import { formatIssues, issueRows } from '../issues.ts'
import { bodyErrors } from './body-errors.ts'
import { readJsonBody } from './body.ts'
import { HttpError } from './errors.ts'

export type Operation = (typeof httpOperations)[HttpOperationId]
export type { OperationInput }
/** The pipeline's erased view of a handler: its input was validated against the operation's own schemas first. */
export type ErasedHandler = (input: {
  path: unknown
  query: unknown
  body: unknown
  req: Request
}) => Response | Promise<Response>

/** The operations of each route (`/sessions/:id`), in the table's order. */
export const operationsByRoute: ReadonlyMap<string, readonly Operation[]> = (() => {
  const byRoute = new Map<string, Operation[]>()
  for (const op of Object.values(httpOperations) as Operation[])
    byRoute.set(op.route, [...(byRoute.get(op.route) ?? []), op])
  return byRoute
})()

/** The route a path matches (`:name` segments match one segment, raw), with its raw parameters. */
export function matchRoute(pathname: string): { route: string; params: Record<string, string> } | undefined {
  const parts = pathname.split('/')
  for (const route of operationsByRoute.keys()) {
    const want = route.split('/')
    if (want.length !== parts.length) continue
    const params: Record<string, string> = {}
    let ok = true
    for (let i = 0; ok && i < want.length; i++) {
      const w = want[i]!
      const part = parts[i]!
      if (!w.startsWith(':')) ok = w === part
      else if (part === '') ok = false
      else params[w.slice(1)] = part
    }
    if (ok) return { route, params }
  }
  return undefined
}

/** 404 for a path no route has (the router ignores a trailing slash; the spec has no such paths). */
export const noRoute = (method: string, pathname: string): HttpError =>
  new HttpError('not_found', `no route for ${method} ${pathname.slice(0, 200)}`)

/** The operation of `route` for `method`; 405 with `Allow` when the route has others only. */
export function operationFor(route: string, method: string): Operation {
  const ops = operationsByRoute.get(route) ?? []
  const op = ops.find((o) => o.method === method)
  if (op) return op
  throw new HttpError('method_not_allowed', `${method} is not allowed on ${route}`, {
    headers: { allow: allowOf(route) },
  })
}

/** The methods a route allows (the `Allow` header). */
export const allowOf = (route: string): string => (operationsByRoute.get(route) ?? []).map((o) => o.method).join(', ')

/** Percent-decoded path parameters; a malformed escape is an unknown resource, not a crash. */
export function decodeParams(raw: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(raw)) {
    try {
      out[k] = decodeURIComponent(String(v))
    } catch {
      throw k === 'id'
        ? new HttpError('session_not_found', 'unknown session id')
        : new HttpError('not_found', `malformed ${k} in the path`)
    }
  }
  return out
}

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

export interface OperationOptions {
  /** Throws 401/403 unless the request may call an operation with these tiers (auth.ts `authorizeTiers`). */
  authorize(req: Request, security: readonly string[], pathSessionId: string | undefined): void
}

/** Authorize, validate the operation's path, query and body, and run its handler with the typed input. */
export async function runOperation(
  op: Operation,
  handler: ErasedHandler,
  req: Request,
  params: Record<string, string>,
  opts: OperationOptions,
): Promise<Response> {
  opts.authorize(req, op.security, params.id)
  let path: Record<string, unknown> = {}
  if (op.pathParams) {
    const r = op.pathParams.safeParse(params)
    if (!r.success) {
      throw 'id' in params
        ? new HttpError('session_not_found', `unknown session id`)
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
    const mapped = (): HttpError | undefined => bodyErrors[op.operationId as HttpOperationId]?.(raw)
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
