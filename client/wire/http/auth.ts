/**
 * Bearer authentication's decision tree (docs/http.md "Authentication (per-session tokens)"),
 * shared by the server and the msw mock; how a token is compared is theirs (the server compares
 * digests in constant time, server/http/auth.ts). With a master token configured:
 * - open operations (`security: []`, the health probes) need nothing;
 * - the master token passes everywhere;
 * - a session token passes on the operations that list `sessionToken` for the session in their
 *   path (`/session/{id}/...`);
 * - a session token that is valid but not enough — its own session's id on a master-only route
 *   (`rotate-token`, the plural `/sessions/{id}/...`), or any route without a session id — is
 *   `403 admin_only` (authenticated, not privileged);
 * - anything else, including another session's token on a `{id}` route, is `401 unauthorized`.
 * Without a master token the server is open (the document's default on loopback).
 */
import { HttpError } from './errors.ts'

/** The bearer token of a request; throws 400 on duplicate Authorization headers. */
export function bearerToken(req: Request): string | undefined {
  const raw = req.headers.get('authorization')
  if (!raw) return undefined
  if (raw.includes(',')) throw new HttpError('invalid_authorization', 'more than one Authorization header')
  const m = /^bearer[ \t]+(\S+)\s*$/i.exec(raw)
  return m ? m[1] : undefined
}

export const unauthorized = (): HttpError =>
  new HttpError('unauthorized', 'missing or invalid bearer token', { headers: { 'www-authenticate': 'Bearer' } })

export const adminOnly = (): HttpError =>
  new HttpError('admin_only', 'this route needs the master token; a session token is not enough')

/** How the tokens a request presents are checked. */
export interface TokenCheck {
  /** Is this the master token? Undefined: no master token is configured, auth is off. */
  isMaster: ((token: string | undefined) => boolean) | undefined
  /** Is `token` the session's own token? */
  verify?(sessionId: string, token: string): boolean
  /** The session whose token this is, if any. */
  sessionOf?(token: string): string | undefined
}

/** Throws 401 or 403 unless the request may call an operation with these security tiers. */
export function authorizeTiers(
  req: Request,
  security: readonly string[],
  pathSessionId: string | undefined,
  check: TokenCheck,
): void {
  if (security.length === 0 || check.isMaster === undefined) return
  const token = bearerToken(req)
  if (check.isMaster(token)) return
  if (token !== undefined) {
    if (pathSessionId !== undefined) {
      if (check.verify?.(pathSessionId, token)) {
        if (security.includes('sessionToken')) return
        throw adminOnly()
      }
    } else if (check.sessionOf?.(token) !== undefined) throw adminOnly()
  }
  throw unauthorized()
}
