/**
 * Browser-facing guards, run before routing:
 * - DNS rebinding: on a loopback bind, a request whose Host is not a loopback name (or an
 *   explicitly allowed one) is refused with 421, so a hostile page that rebinds its domain to
 *   127.0.0.1 cannot drive the server.
 * - CORS: a request carrying an `Origin` outside the `--cors` allow-list gets 403; an allowed
 *   origin gets `Access-Control-Allow-Origin` echoed exactly (never `*`), and its preflight 204.
 *   A same-origin request (the /ui console) is not cross-origin and passes without CORS headers.
 */
import { HttpError } from './errors.ts'
import { hostAllowed, hostName, isLoopbackName } from './host-names.ts'

export interface GuardOptions {
  /** Exact origins allowed to call from a browser (`--cors`, repeatable). */
  cors: readonly string[]
  /** Host names accepted besides loopback ones; undefined = no Host check (non-loopback bind). */
  allowedHosts?: readonly string[]
  /**
   * Names this server is reached by besides loopback names and `allowedHosts` (a non-loopback
   * bind: its address, or every interface address for a wildcard bind). Only these count as the
   * server's own origin for a browser request; a rebound name never does.
   */
  servedHosts?: readonly string[]
}

export const CORS_ALLOW_HEADERS = 'authorization, content-type, last-event-id'
export const CORS_MAX_AGE = '600'

/** Throws when the Host header is not acceptable for a loopback-bound server. */
export function checkHost(req: Request, opts: GuardOptions): void {
  if (!opts.allowedHosts) return
  const host = req.headers.get('host') ?? new URL(req.url).host
  if (!hostAllowed(host, opts)) {
    throw new HttpError('misdirected_request', `host ${JSON.stringify(host.slice(0, 200))} is not served here`)
  }
}

/**
 * True when `Origin` names the server the request reached (its scheme-less host and port equal
 * the Host header): the web console at /ui posting to its own origin. Browsers send `Origin` on
 * same-origin POSTs too; that is not a cross-origin call, so the allow-list does not apply.
 */
export function isSameOrigin(origin: string, req: Request, opts: GuardOptions = { cors: [] }): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) return false
  const host = (req.headers.get('host') ?? new URL(req.url).host).trim().toLowerCase()
  if (url.host !== host) return false
  // A DNS-rebinding page sends a matching Origin/Host pair for its own name: only a name this
  // server is known by makes the request its own origin.
  const name = hostName(host)
  return (
    name !== undefined &&
    (isLoopbackName(name) || (opts.allowedHosts ?? []).includes(name) || (opts.servedHosts ?? []).includes(name))
  )
}

/** CORS response headers for an allowed origin, or a 403 for a disallowed one; {} without Origin or from the same origin. */
export function corsHeaders(req: Request, opts: GuardOptions): Record<string, string> {
  const origin = req.headers.get('origin')
  if (origin === null || isSameOrigin(origin, req, opts)) return {}
  if (!opts.cors.includes(origin))
    throw new HttpError('origin_not_allowed', `origin ${JSON.stringify(origin)} is not in the --cors allow-list`)
  return { 'access-control-allow-origin': origin, vary: 'Origin', 'access-control-expose-headers': 'content-type' }
}

/** The preflight answer for an allowed origin. */
export function preflight(req: Request, opts: GuardOptions, allow: string): Response {
  const headers = corsHeaders(req, opts)
  return new Response(null, {
    status: 204,
    headers: {
      ...headers,
      'access-control-allow-methods': allow,
      'access-control-allow-headers': CORS_ALLOW_HEADERS,
      'access-control-max-age': CORS_MAX_AGE,
    },
  })
}
