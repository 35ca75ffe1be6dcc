/**
 * Bearer authentication on the server: the decision tree is the operation pipeline's
 * (client/wire/http/auth.ts, which the msw mock runs too); here the master token is compared as
 * SHA-256 digests in constant time, so neither the length nor a prefix of the secret leaks
 * through timing, and session tokens are checked against the server's tokens: in its memory
 * (synchronously), or, with several instances over one store, in the store (one asynchronous
 * look-up by digest, made before the synchronous decision). A request another instance
 * forwarded (forward.ts) carries no token: it is who that instance authenticated (its principal).
 */
import { crypto } from '../platform/builtins.ts'
import { bearerToken, type TokenCheck } from '../../client/wire/http/auth.ts'
import { SessionTokens, type TokenRegistry } from './session-tokens.ts'
import type { Principal } from '../../generated/instances/forward.gen.ts'

export { authorizeTiers, bearerToken } from '../../client/wire/http/auth.ts'

const digest = (s: string): Buffer => crypto().createHash('sha256').update(s, 'utf8').digest()

export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false
  return crypto().timingSafeEqual(digest(presented), digest(expected))
}

export interface AuthContext {
  masterToken: string | undefined
  tokens?: TokenRegistry
}

/**
 * Who an authenticated request is: the master token, or a session's token. The same shape
 * travels with a request forwarded to another instance (specs/asyncapi/instances.asyncapi.yaml).
 */
export type { Principal }

/** Requests forwarded by another instance, with who they were authenticated as there. */
const forwardedAs = new WeakMap<Request, Principal>()

/** `req` was forwarded by another instance, which authenticated it as `principal` (forward.ts). */
export function markForwarded(req: Request, principal: Principal): void {
  forwardedAs.set(req, principal)
}

/** The check of a forwarded request's principal (no token travels between instances). */
function principalCheck(p: Principal): TokenCheck {
  return {
    isMaster: () => p.master,
    verify: (id) => !p.master && p.session === id,
    sessionOf: () => (p.master ? undefined : p.session),
  }
}

/**
 * How this request's bearer token is checked: synchronous, except with shared tokens and a token
 * that is not the master token (its session is looked up in the store first).
 */
export function tokenCheck(req: Request, ctx: AuthContext): TokenCheck | Promise<TokenCheck> {
  const master = ctx.masterToken
  if (master === undefined) return { isMaster: undefined }
  const forwarded = forwardedAs.get(req)
  if (forwarded) return principalCheck(forwarded)
  const isMaster = (token: string | undefined): boolean => tokenMatches(token, master)
  const tokens = ctx.tokens
  if (tokens === undefined) return { isMaster }
  if (tokens instanceof SessionTokens)
    return {
      isMaster,
      verify: (id, token) => tokens.verify(id, token),
      sessionOf: (token) => tokens.sessionOf(token),
    }
  const token = bearerToken(req)
  if (token === undefined || isMaster(token)) return { isMaster }
  return tokens.sessionOf(token).then((session) => ({
    isMaster,
    verify: (id) => session !== undefined && session === id,
    sessionOf: () => session,
  }))
}

/** Who an authorized request is (undefined when authentication is off or it presented no known token). */
export function principalOf(req: Request, check: TokenCheck): Principal | undefined {
  if (check.isMaster === undefined) return undefined
  const token = bearerToken(req)
  if (check.isMaster(token)) return { master: true }
  const session = check.sessionOf?.(token ?? '')
  return session === undefined ? undefined : { master: false, session }
}
