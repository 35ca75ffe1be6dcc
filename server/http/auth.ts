/**
 * Bearer authentication, per the decision tree of docs/http.md "Authentication (per-session
 * tokens)". With a master token configured:
 * - open operations (`security: []`, the health probes) need nothing;
 * - the master token passes everywhere (compared as SHA-256 digests in constant time, so
 *   neither the length nor a prefix of the secret leaks through timing);
 * - a session token passes on the operations that list `sessionToken` for the session in their
 *   path (`/session/{id}/...`);
 * - a session token that is valid but not enough — its own session's id on a master-only route
 *   (`rotate-token`, the plural `/sessions/{id}/...`), or any route without a session id — is
 *   `403 admin_only` (authenticated, not privileged);
 * - anything else, including another session's token on a `{id}` route, is `401 unauthorized`.
 * Without a master token the server is open (the document's default on loopback).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { HttpError } from './errors.ts'
import type { SessionTokens } from './session-tokens.ts'

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()

/** The bearer token of a request; throws 400 on duplicate Authorization headers. */
export function bearerToken(req: Request): string | undefined {
  const raw = req.headers.get('authorization')
  if (!raw) return undefined
  if (raw.includes(',')) throw new HttpError('invalid_authorization', 'more than one Authorization header')
  const m = /^bearer[ \t]+(\S+)\s*$/i.exec(raw)
  return m ? m[1] : undefined
}

export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false
  return timingSafeEqual(digest(presented), digest(expected))
}

export const unauthorized = (): HttpError =>
  new HttpError('unauthorized', 'missing or invalid bearer token', { headers: { 'www-authenticate': 'Bearer' } })

export const adminOnly = (): HttpError =>
  new HttpError('admin_only', 'this route needs the master token; a session token is not enough')

export interface AuthContext {
  masterToken: string | undefined
  tokens?: SessionTokens
}

/** Throws 401 or 403 unless the request may call an operation with these security tiers. */
export function authorize(
  req: Request,
  security: readonly string[],
  pathSessionId: string | undefined,
  ctx: AuthContext,
): void {
  if (security.length === 0 || ctx.masterToken === undefined) return
  const token = bearerToken(req)
  if (tokenMatches(token, ctx.masterToken)) return
  if (token !== undefined && ctx.tokens) {
    if (pathSessionId !== undefined) {
      if (ctx.tokens.verify(pathSessionId, token)) {
        if (security.includes('sessionToken')) return
        throw adminOnly()
      }
    } else if (ctx.tokens.sessionOf(token) !== undefined) throw adminOnly()
  }
  throw unauthorized()
}
