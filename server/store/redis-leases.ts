/**
 * Leases of running sessions in the Redis store (docs/scale-out.md, docs/decisions/0330-session-leases.md).
 * A session's lease is the key `chimera:s:{<id>}:owner`: the owning instance's id, set with
 * `SET NX PX` semantics (a Lua script: free or already ours → ours), a time-to-live of `ttlMs`
 * (5 s) renewed every `renewMs` (1.5 s) while the instance lives, released (compare-and-delete)
 * once the session is idle. The store's append and queue scripts check the key against this
 * instance's id (fencing): an instance that lost its lease cannot write to the session after it.
 * A dead owner's lease is gone at most `ttlMs` after its last renewal, so at most `ttlMs` after it
 * died; the next command for the session claims it wherever it arrives.
 */
import type { RedisClientType } from '@redis/client'
import type { Logger } from '../log.ts'
import { keys, unavailable } from './redis-shared.ts'
import type { LeaseClaim, SessionLeases } from './types.ts'

export const LEASE_TTL_MS = 5_000
export const LEASE_RENEW_MS = 1_500

// KEYS: owner, meta, events. ARGV: instance id, ttl ms.
// → {'none'} | {'mine', XLEN} | {'other', owner}. Takes the lease when it is free.
const CLAIM = `
if redis.call('EXISTS', KEYS[2]) == 0 then return {'none', ''} end
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return {'other', cur} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {'mine', tostring(redis.call('XLEN', KEYS[3]))}
`
// KEYS: owner. ARGV: instance id, ttl ms. → 1 renewed, 0 not ours (lost).
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0
`
// KEYS: owner. ARGV: instance id. Deletes the lease only if it is ours.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

interface Held {
  /** The lease is ours until then at least (ms since the epoch; the TTL from the last renewal sent). */
  until: number
  /** Commands running under the lease (never released meanwhile). */
  busy: number
  /** The last command's end (a just-claimed session is not released before its work is queued). */
  lastUsed: number
}

export interface LeaseHooks {
  /** True when the session runs nothing here (its lease may be released). */
  idle(sessionId: string): boolean
  /** The lease was lost (taken over, or not renewed within its TTL): the local copy is stale. */
  lost(sessionId: string): void
}

export interface RedisLeasesOptions {
  instanceId: string
  logger: Logger
  ttlMs?: number
  renewMs?: number
}

export class RedisLeases implements SessionLeases {
  readonly instanceId: string
  readonly ttlMs: number
  readonly renewMs: number
  readonly #client: RedisClientType
  readonly #logger: Logger
  readonly #held = new Map<string, Held>()
  /** Sessions with a claim in flight: never released as idle meanwhile (the claimer is about to use them). */
  readonly #claiming = new Map<string, number>()
  #hooks: LeaseHooks = { idle: () => true, lost: () => {} }
  #timer: NodeJS.Timeout | undefined
  #ticking = false

  constructor(client: RedisClientType, opts: RedisLeasesOptions) {
    this.#client = client
    this.#logger = opts.logger
    this.instanceId = opts.instanceId
    this.ttlMs = opts.ttlMs ?? LEASE_TTL_MS
    this.renewMs = opts.renewMs ?? LEASE_RENEW_MS
  }

  /** What the manager says about its sessions (idle, lost). */
  setHooks(hooks: LeaseHooks): void {
    this.#hooks = hooks
  }

  /** Renew held leases every `renewMs`, release idle ones. */
  start(): void {
    if (this.#timer) return
    this.#timer = setInterval(() => void this.#tick(), this.renewMs)
    this.#timer.unref()
  }

  /** Stop renewing; with `release`, give every held lease up (a clean shutdown). */
  async stop(release: boolean): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    if (release) await Promise.all([...this.#held.keys()].map((id) => this.release(id).catch(() => {})))
    this.#held.clear()
  }

  /** The create script took the lease with the session. */
  created(sessionId: string): void {
    const now = Date.now()
    this.#held.set(sessionId, { until: now + this.ttlMs, busy: 0, lastUsed: now })
  }

  async claim(sessionId: string): Promise<LeaseClaim> {
    const k = keys(sessionId)
    const sent = Date.now()
    let reply: unknown
    this.#claiming.set(sessionId, (this.#claiming.get(sessionId) ?? 0) + 1)
    try {
      reply = await this.#client.eval(CLAIM, {
        keys: [k.owner, k.meta, k.events],
        arguments: [this.instanceId, String(this.ttlMs)],
      })
    } catch (err) {
      throw unavailable(err)
    } finally {
      const n = this.#claiming.get(sessionId)! - 1
      if (n > 0) this.#claiming.set(sessionId, n)
      else this.#claiming.delete(sessionId)
    }
    const [kind, value] = reply as [string, string]
    if (kind === 'none') return { kind: 'none' }
    if (kind === 'other') return { kind: 'other', owner: value }
    const before = this.#held.get(sessionId)
    const fresh = !before || before.until <= sent
    // Claimed to be used: the idle release waits a renewal period from now, so it cannot slip in
    // between this claim and the command that follows it (which would then be fenced).
    if (before && !fresh) Object.assign(before, { until: sent + this.ttlMs, lastUsed: Date.now() })
    else this.#held.set(sessionId, { until: sent + this.ttlMs, busy: 0, lastUsed: Date.now() })
    return { kind: 'mine', fresh, length: Number(value) }
  }

  holds(sessionId: string): boolean {
    const h = this.#held.get(sessionId)
    return h !== undefined && h.until > Date.now()
  }

  async owner(sessionId: string): Promise<string | undefined> {
    try {
      return (await this.#client.get(keys(sessionId).owner)) ?? undefined
    } catch (err) {
      throw unavailable(err)
    }
  }

  async release(sessionId: string): Promise<void> {
    if (!this.#held.delete(sessionId)) return
    await this.#client.eval(RELEASE, { keys: [keys(sessionId).owner], arguments: [this.instanceId] })
  }

  async using<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const h = this.#held.get(sessionId)
    if (h) h.busy++
    try {
      return await fn()
    } finally {
      if (h) {
        h.busy--
        h.lastUsed = Date.now()
      }
    }
  }

  /** Renew what is held; release what is idle (and was not used within a renewal period); drop what was lost. */
  async #tick(): Promise<void> {
    if (this.#ticking) return
    this.#ticking = true
    try {
      const now = Date.now()
      await Promise.all(
        [...this.#held].map(async ([id, h]) => {
          if (h.busy === 0 && !this.#claiming.has(id) && now - h.lastUsed >= this.renewMs && this.#hooks.idle(id)) {
            await this.release(id).catch((err: unknown) =>
              this.#logger.debug('lease release failed (it runs out by itself)', {
                session_id: id,
                error: String(err),
              }),
            )
            return
          }
          const sent = Date.now()
          let renewed: unknown
          try {
            renewed = await this.#client.eval(RENEW, {
              keys: [keys(id).owner],
              arguments: [this.instanceId, String(this.ttlMs)],
            })
          } catch (err) {
            // Redis unreachable: the lease holds until its TTL; after that this copy is stale.
            if (h.until <= Date.now()) this.#lose(id, `not renewed within ${this.ttlMs} ms (${String(err)})`)
            return
          }
          if (renewed === 1) h.until = sent + this.ttlMs
          else this.#lose(id, 'taken over by another instance')
        }),
      )
    } finally {
      this.#ticking = false
    }
  }

  #lose(sessionId: string, why: string): void {
    if (!this.#held.delete(sessionId)) return
    this.#logger.warn(`session ${sessionId}: lease lost (${why})`)
    this.#hooks.lost(sessionId)
  }
}
