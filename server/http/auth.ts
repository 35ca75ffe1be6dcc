/**
 * Bearer authentication on the server: the decision tree is the operation pipeline's
 * (client/wire/http/auth.ts, which the msw mock runs too); here the master token is compared as
 * SHA-256 digests in constant time, so neither the length nor a prefix of the secret leaks
 * through timing, and session tokens are checked against the server's SessionTokens.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { authorizeTiers } from '../../client/wire/http/auth.ts'
import type { SessionTokens } from './session-tokens.ts'

export { bearerToken } from '../../client/wire/http/auth.ts'

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()

export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false
  return timingSafeEqual(digest(presented), digest(expected))
}

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
  const master = ctx.masterToken
  const tokens = ctx.tokens
  authorizeTiers(req, security, pathSessionId, {
    isMaster: master === undefined ? undefined : (token) => tokenMatches(token, master),
    verify: tokens && ((id, token) => tokens.verify(id, token)),
    sessionOf: tokens && ((token) => tokens.sessionOf(token)),
  })
}
