/**
 * Bearer authentication. Tokens are compared as SHA-256 digests in constant time, so neither
 * the length nor a prefix of the secret leaks through timing. Per-session tokens join the
 * master token when sessions land; an operation's `security` list (from the spec) says which
 * tiers may call it.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { HttpError } from './errors.ts'

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()

/** The bearer token of a request; throws 400 on duplicate Authorization headers. */
export function bearerToken(req: Request): string | undefined {
  const raw = req.headers.get('authorization')
  if (!raw) return undefined
  if (raw.includes(',')) throw new HttpError(400, 'invalid_authorization', 'more than one Authorization header')
  const m = /^bearer[ \t]+(\S+)\s*$/i.exec(raw)
  return m ? m[1] : undefined
}

export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false
  return timingSafeEqual(digest(presented), digest(expected))
}

export const unauthorized = (): HttpError =>
  new HttpError(401, 'unauthorized', 'missing or invalid bearer token', { headers: { 'www-authenticate': 'Bearer' } })

/** Throws 401 unless the operation is open, auth is off, or the master token is presented. */
export function authorize(req: Request, security: readonly string[], masterToken: string | undefined): void {
  if (security.length === 0 || masterToken === undefined) return
  if (!tokenMatches(bearerToken(req), masterToken)) throw unauthorized()
}
