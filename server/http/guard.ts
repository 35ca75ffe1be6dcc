/**
 * Browser-facing guards, run before routing:
 * - DNS rebinding: on a loopback bind, a request whose Host is not a loopback name (or an
 *   explicitly allowed one) is refused with 421, so a hostile page that rebinds its domain to
 *   127.0.0.1 cannot drive the server.
 * - CORS: a request carrying an `Origin` outside the `--cors` allow-list gets 403; an allowed
 *   origin gets `Access-Control-Allow-Origin` echoed exactly (never `*`), and its preflight 204.
 */
import { HttpError } from './errors.ts'

export interface GuardOptions {
  /** Exact origins allowed to call from a browser (`--cors`, repeatable). */
  cors: readonly string[]
  /** Host names accepted besides loopback ones; undefined = no Host check (non-loopback bind). */
  allowedHosts?: readonly string[]
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])
export const CORS_ALLOW_HEADERS = 'authorization, content-type, last-event-id'
export const CORS_MAX_AGE = '600'

function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1)
  const i = host.lastIndexOf(':')
  return (i === -1 ? host : host.slice(0, i)).toLowerCase()
}

/** Throws when the Host header is not acceptable for a loopback-bound server. */
export function checkHost(req: Request, opts: GuardOptions): void {
  if (!opts.allowedHosts) return
  const host = req.headers.get('host') ?? new URL(req.url).host
  const name = hostName(host)
  if (!name || (!LOOPBACK_HOSTS.has(name) && !opts.allowedHosts.includes(name) && !name.startsWith('127.'))) {
    throw new HttpError(421, 'misdirected_request', `host ${JSON.stringify(host)} is not served here`)
  }
}

/** CORS response headers for an allowed origin, or a 403 for a disallowed one; {} without Origin. */
export function corsHeaders(req: Request, opts: GuardOptions): Record<string, string> {
  const origin = req.headers.get('origin')
  if (origin === null) return {}
  if (!opts.cors.includes(origin)) throw new HttpError(403, 'origin_not_allowed', `origin ${JSON.stringify(origin)} is not in the --cors allow-list`)
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
