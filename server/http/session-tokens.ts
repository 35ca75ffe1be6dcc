/**
 * Per-session bearer tokens (docs/http.md "Authentication (per-session tokens)"): 32 random bytes,
 * URL-safe base64, issued on `POST /session`, scoped to that session, rotated with
 * `rotate-token` (the old token is dead at once), dropped when the session leaves the manager.
 *
 * Only SHA-256 digests are kept, in memory: a heap dump or a log line of this object holds no
 * usable token. A token checked against a session is compared digest to digest with
 * `timingSafeEqual`. A token checked against "any session" (a master-only route, to tell
 * `403 admin_only` from `401`) is looked up by its digest in a map: the lookup's timing depends
 * on the digest, which the caller cannot steer towards a secret.
 */
import { randomBytes } from '../platform/random.ts'
import { crypto } from '../platform/builtins.ts'
import { sessionNotFound } from '../errors.ts'
import type { LiveSessions } from '../store/types.ts'

export const SESSION_TOKEN_BYTES = 32

const digest = (token: string): Buffer => crypto().createHash('sha256').update(token, 'utf8').digest()
const newToken = (): string => randomBytes(SESSION_TOKEN_BYTES).toString('base64url')

export class SessionTokens {
  readonly #bySession = new Map<string, Buffer>()
  readonly #byDigest = new Map<string, string>()

  /** A fresh token for `sessionId`; any previous token of the session stops working. */
  issue(sessionId: string): string {
    this.revoke(sessionId)
    const token = newToken()
    const d = digest(token)
    this.#bySession.set(sessionId, d)
    this.#byDigest.set(d.toString('hex'), sessionId)
    return token
  }

  /** Same as `issue`, for a session that has a token; undefined when it has none. */
  rotate(sessionId: string): string | undefined {
    return this.#bySession.has(sessionId) ? this.issue(sessionId) : undefined
  }

  revoke(sessionId: string): void {
    const old = this.#bySession.get(sessionId)
    if (!old) return
    this.#bySession.delete(sessionId)
    this.#byDigest.delete(old.toString('hex'))
  }

  /** True when `token` is the current token of `sessionId` (constant-time digest compare). */
  verify(sessionId: string, token: string): boolean {
    const want = this.#bySession.get(sessionId)
    // Compare against a digest even for an unknown session, so both paths cost the same.
    return crypto().timingSafeEqual(digest(token), want ?? UNKNOWN) && want !== undefined
  }

  /** The session a valid token belongs to, if any. */
  sessionOf(token: string): string | undefined {
    return this.#byDigest.get(digest(token).toString('hex'))
  }

  has(sessionId: string): boolean {
    return this.#bySession.has(sessionId)
  }

  get size(): number {
    return this.#bySession.size
  }
}

const UNKNOWN = Buffer.alloc(32)

/**
 * Session tokens shared by every instance over one store (docs/scale-out.md "Session tokens and
 * live sessions"): the same tokens, kept as SHA-256 digests in the store (`LiveSessions`), so a
 * token issued by one instance is valid on all of them; the checks are asynchronous (one store
 * round trip, looked up by digest). A token is valid while its session is live (touched within
 * the idle TTL on some instance), until it is rotated or the session deleted.
 */
export class SharedSessionTokens {
  readonly live: LiveSessions

  constructor(live: LiveSessions) {
    this.live = live
  }

  /** A fresh token for `sessionId`; any previous token of the session stops working. */
  async issue(sessionId: string): Promise<string> {
    const token = newToken()
    if (!(await this.live.setToken(sessionId, digest(token).toString('hex')))) throw sessionNotFound(sessionId)
    return token
  }

  revoke(sessionId: string): Promise<void> {
    return this.live.dropToken(sessionId)
  }

  /** The live session a valid token belongs to, if any. */
  sessionOf(token: string): Promise<string | undefined> {
    return this.live.sessionOfToken(digest(token).toString('hex'))
  }
}

/** The session tokens of a server: in its memory (one server), or shared through the store. */
export type TokenRegistry = SessionTokens | SharedSessionTokens
