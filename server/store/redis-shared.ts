/**
 * What the Redis store's modules share: the key names (redis-store.ts has the layout) and the
 * one `store_unavailable` error of a Redis that cannot be reached. A session's keys carry its id in
 * braces, so they share a hash slot; an instance's keys (its inbox of forwarded commands and its
 * replies, redis-bus.ts) carry the instance id the same way.
 */
import { instanceLists } from '../../generated/instances/forward.gen.ts'
import { ChimeraError } from '../errors.ts'

export const INDEX = 'chimera:sessions'
export const AUDIT = 'chimera:audit'
/** Sorted set: the singular family's live sessions, id scored by its last touch (ms), on any instance. */
export const LIVE = 'chimera:live'
/** Prefix of `chimera:token:<hex digest>` → the session whose current bearer token has that SHA-256 digest. */
export const TOKEN_PREFIX = 'chimera:token:'
/** Sorted set: every held session lease, scored by when it runs out (Redis clock, ms): the sweep's work list. */
export const LEASES = 'chimera:leases'

export const keys = (id: string) => {
  const base = `chimera:s:{${id}}`
  return {
    events: `${base}:events`,
    meta: `${base}:meta`,
    summary: `${base}:summary`,
    queued: `${base}:queued`,
    /** The SHA-256 digest (hex) of the session's current bearer token (redis-live.ts). */
    token: `${base}:token`,
    /** The lease: the owning instance's id, with a time-to-live (redis-leases.ts). */
    owner: `${base}:owner`,
  }
}

export const instanceKeys = (instanceId: string) => {
  // The forwarding lists as specs/asyncapi/instances.asyncapi.yaml names them; the braces stay (a hash tag).
  const key = (template: string): string => template.replace('{instance}', () => `{${instanceId}}`)
  /** `alive`: set with the lease TTL on every renewal tick while the instance runs (redis-leases.ts). */
  return {
    inbox: key(instanceLists.inbox),
    replies: key(instanceLists.replies),
    alive: `chimera:i:{${instanceId}}:alive`,
  }
}

/** Seconds a client is told to wait (HTTP `Retry-After`) while Redis is unreachable. */
export const STORE_RETRY_AFTER_S = 2

/** A Redis error, a refused or lost connection, as the store's `store_unavailable`. */
export function unavailable(err: unknown): ChimeraError {
  const msg = err instanceof Error ? err.message : String(err)
  return new ChimeraError('store_unavailable', `the Redis store is unavailable (${msg}); retry shortly`, {
    detail: { retry_after_s: STORE_RETRY_AFTER_S },
    cause: err,
  })
}
