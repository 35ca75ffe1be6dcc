/**
 * Leases of running sessions in the Redis store (docs/scale-out.md, docs/decisions/0330-session-leases.md).
 * A session's lease is the key `chimera:s:{<id>}:owner`: the owning instance's id, set with
 * `SET NX PX` semantics (a Lua script: free or already ours → ours), a time-to-live of `ttlMs`
 * (5 s) renewed every `renewMs` (1.5 s) while the instance lives, released (compare-and-delete)
 * once the session is idle. The store's append and queue scripts check the key against this
 * instance's id (fencing): an instance that lost its lease cannot write to the session after it.
 * A dead owner's lease is gone at most `ttlMs` after its last renewal, so at most `ttlMs` after it
 * died.
 *
 * The sweep (docs/decisions/0375-lease-sweep.md): every held lease is also in the sorted set
 * `chimera:leases`, scored by when it runs out (Redis's clock; every script that sets the key
 * sets the score, releasing removes it). Every `sweepMs` (1/5 of the TTL) each instance reads at
 * most `SWEEP_BATCH` leases whose time is past; for each, one script claims the session only if
 * the key is still gone (exactly one instance wins; a lease renewed or claimed meanwhile is left
 * alone), and the manager's `expired` hook closes the turn the dead owner left open — the same
 * take-over as a command's claim. The lease is then released as any idle one. So a dead owner's
 * interrupted turn is closed at most `ttlMs + sweepMs` (6 s) after it died, without a command.
 * No keyspace notifications are needed.
 */
import type { RedisClientType } from '@redis/client'
import type { Logger } from '../log.ts'
import { instanceKeys, keys, LEASES, unavailable } from './redis-shared.ts'
import type { LeaseClaim, LeaseHooks, SessionLeases } from './types.ts'

export const LEASE_TTL_MS = 5_000
export const LEASE_RENEW_MS = 1_500
/** Expired leases one instance claims per sweep at most (the sweep's bounded work). */
export const SWEEP_BATCH = 16

/**
 * Lua: `lease_take(owner, leases, id, me, ttl)` sets the owner key to `me` for `ttl` ms and scores the
 * session in `chimera:leases` by the same expiry on Redis's clock. Every script that takes or
 * renews a lease (create, claim, renew, sweep) goes through it, so the score is the key's expiry.
 */
export const LEASE_LUA = `
local function lease_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function lease_take(owner, leases, id, me, ttl)
  redis.call('SET', owner, me, 'PX', ttl)
  redis.call('ZADD', leases, lease_now() + tonumber(ttl), id)
end
`

// KEYS: owner, meta, events, leases. ARGV: instance id, ttl ms, session id.
// → {'none'} | {'mine', XLEN, kept} | {'other', owner}. Takes the lease when it is free; `kept` is
// '1' when the key was still this instance's (held without a break: nobody else wrote meanwhile).
const CLAIM = `${LEASE_LUA}
if redis.call('EXISTS', KEYS[2]) == 0 then return {'none', ''} end
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return {'other', cur} end
lease_take(KEYS[1], KEYS[4], ARGV[3], ARGV[1], ARGV[2])
return {'mine', tostring(redis.call('XLEN', KEYS[3])), cur and '1' or '0'}
`
// KEYS: owner, leases. ARGV: instance id, ttl ms, session id. → 1 renewed, 0 not ours (lost).
const RENEW = `${LEASE_LUA}
if redis.call('GET', KEYS[1]) == ARGV[1] then lease_take(KEYS[1], KEYS[2], ARGV[3], ARGV[1], ARGV[2]) return 1 end
return 0
`
// KEYS: owner, leases. ARGV: instance id, session id. Deletes the lease only if it is ours.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return redis.call('DEL', KEYS[1])
end
return 0
`
// KEYS: leases. ARGV: how many. → the sessions whose lease ran out (score ≤ now), the longest gone first.
const EXPIRED = `${LEASE_LUA}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', lease_now(), 'LIMIT', 0, tonumber(ARGV[1]))
`
// KEYS: owner, meta, events, leases. ARGV: instance id, ttl ms, session id.
// → {'mine', XLEN} when the lease had run out and is now ours; {'held'} when someone holds it
// (renewed, claimed or swept since it was listed); {'gone'} when it was released or the session removed.
const SWEEP = `${LEASE_LUA}
if not redis.call('ZSCORE', KEYS[4], ARGV[3]) then return {'gone', ''} end
if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('ZREM', KEYS[4], ARGV[3]) return {'gone', ''} end
local left = redis.call('PTTL', KEYS[1])
if left > 0 then redis.call('ZADD', KEYS[4], lease_now() + left, ARGV[3]) return {'held', ''} end
if left == -1 then redis.call('ZREM', KEYS[4], ARGV[3]) return {'held', ''} end
lease_take(KEYS[1], KEYS[4], ARGV[3], ARGV[1], ARGV[2])
return {'mine', tostring(redis.call('XLEN', KEYS[3]))}
`

interface Held {
  /** The lease is ours until then at least (ms since the epoch; the TTL from the last renewal sent). */
  until: number
  /** Commands running under the lease (never released meanwhile). */
  busy: number
  /** The last command's end (a just-claimed session is not released before its work is queued). */
  lastUsed: number
}

export interface RedisLeasesOptions {
  instanceId: string
  logger: Logger
  ttlMs?: number
  renewMs?: number
  /** How often to sweep leases that ran out (default 1/5 of the TTL). */
  sweepMs?: number
}

export class RedisLeases implements SessionLeases {
  readonly instanceId: string
  readonly ttlMs: number
  readonly renewMs: number
  readonly sweepMs: number
  readonly #client: RedisClientType
  readonly #logger: Logger
  readonly #held = new Map<string, Held>()
  /** Sessions with a claim in flight: never released as idle meanwhile (the claimer is about to use them). */
  readonly #claiming = new Map<string, number>()
  #hooks: LeaseHooks = { idle: () => true, lost: () => {} }
  #timer: NodeJS.Timeout | undefined
  #sweepTimer: NodeJS.Timeout | undefined
  #ticking = false
  #sweeping = false

  constructor(client: RedisClientType, opts: RedisLeasesOptions) {
    this.#client = client
    this.#logger = opts.logger
    this.instanceId = opts.instanceId
    this.ttlMs = opts.ttlMs ?? LEASE_TTL_MS
    this.renewMs = opts.renewMs ?? LEASE_RENEW_MS
    this.sweepMs = opts.sweepMs ?? Math.max(50, Math.floor(this.ttlMs / 5))
  }

  /** What the manager says about its sessions (idle, lost) and does with a swept one (expired). */
  setHooks(hooks: LeaseHooks): void {
    this.#hooks = hooks
  }

  /** Renew held leases every `renewMs`, release idle ones; sweep leases that ran out every `sweepMs`. */
  start(): void {
    if (this.#timer) return
    void this.#heartbeat()
    this.#timer = setInterval(() => void this.#tick(), this.renewMs)
    this.#timer.unref()
    this.#sweepTimer = setInterval(() => void this.sweep(), this.sweepMs)
    this.#sweepTimer.unref()
  }

  /** Stop renewing and sweeping; with `release`, give every held lease up (a clean shutdown). */
  async stop(release: boolean): Promise<void> {
    clearInterval(this.#timer)
    clearInterval(this.#sweepTimer)
    this.#timer = undefined
    this.#sweepTimer = undefined
    if (release) {
      await Promise.all([...this.#held.keys()].map((id) => this.release(id).catch(() => {})))
      await this.#client.del(instanceKeys(this.instanceId).alive).catch(() => {})
    }
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
        keys: [k.owner, k.meta, k.events, LEASES],
        arguments: [this.instanceId, String(this.ttlMs), sessionId],
      })
    } catch (err) {
      throw unavailable(err)
    } finally {
      const n = this.#claiming.get(sessionId)! - 1
      if (n > 0) this.#claiming.set(sessionId, n)
      else this.#claiming.delete(sessionId)
    }
    const [kind, value, kept] = reply as [string, string, string?]
    if (kind === 'none') return { kind: 'none' }
    if (kind === 'other') return { kind: 'other', owner: value }
    const before = this.#held.get(sessionId)
    // Its time here ran out (a renewal's answer was late), but the key was still this instance's:
    // held without a break, so the copy here is current and a turn it runs goes on.
    const fresh = !before || (before.until <= sent && kept !== '1')
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

  async instanceAlive(instanceId: string): Promise<boolean> {
    try {
      return (await this.#client.exists(instanceKeys(instanceId).alive)) === 1
    } catch (err) {
      throw unavailable(err)
    }
  }

  /** This instance runs: its liveness key lives one TTL from now (a forwarded command's sender reads it). */
  async #heartbeat(): Promise<void> {
    await this.#client
      .set(instanceKeys(this.instanceId).alive, '1', { PX: this.ttlMs })
      .catch((err: unknown) => this.#logger.debug('liveness key not set', { error: String(err) }))
  }

  async release(sessionId: string): Promise<void> {
    if (!this.#held.delete(sessionId)) return
    await this.#client.eval(RELEASE, { keys: [keys(sessionId).owner, LEASES], arguments: [this.instanceId, sessionId] })
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
      void this.#heartbeat()
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
              keys: [keys(id).owner, LEASES],
              arguments: [this.instanceId, String(this.ttlMs), id],
            })
          } catch (err) {
            // Redis unreachable: the lease holds until its TTL; after that this copy is stale.
            if (h.until <= Date.now()) this.#lose(id, `not renewed within ${this.ttlMs} ms (${String(err)})`)
            return
          }
          if (renewed === 1) h.until = sent + this.ttlMs
          else this.#lose(id, 'it ran out, or another instance took it over')
        }),
      )
    } finally {
      this.#ticking = false
    }
  }

  /**
   * One sweep (see the file comment): claim at most `SWEEP_BATCH` sessions whose lease ran out
   * and hand each to the `expired` hook under the lease. Nothing without the hook (no manager).
   * Not re-entered; a failure is retried by a later sweep (the lease claimed here runs out again).
   */
  async sweep(): Promise<void> {
    const expired = this.#hooks.expired
    if (!expired || this.#sweeping) return
    this.#sweeping = true
    try {
      const ids = (await this.#client.eval(EXPIRED, {
        keys: [LEASES],
        arguments: [String(SWEEP_BATCH)],
      })) as string[]
      // A lease this instance holds (it was paused past the TTL) is the renewal's to find lost.
      const mine = ids.filter((id) => !this.#held.has(id) && !this.#claiming.has(id))
      await Promise.all(mine.map((id) => this.#sweepOne(id, expired)))
    } catch (err) {
      this.#logger.debug('lease sweep failed; the next one retries', { error: String(err) })
    } finally {
      this.#sweeping = false
    }
  }

  async #sweepOne(id: string, expired: NonNullable<LeaseHooks['expired']>): Promise<void> {
    const k = keys(id)
    const sent = Date.now()
    const reply = (await this.#client.eval(SWEEP, {
      keys: [k.owner, k.meta, k.events, LEASES],
      arguments: [this.instanceId, String(this.ttlMs), id],
    })) as [string, string]
    if (reply[0] !== 'mine') return
    const h: Held = { until: sent + this.ttlMs, busy: 0, lastUsed: Date.now() }
    this.#held.set(id, h)
    this.#logger.info(`session ${id}: its owner's lease ran out; taken over here to close what it left open`)
    try {
      // Released afterwards as any idle lease (by the renewal tick), so a command that claimed it meanwhile keeps it.
      await this.using(id, () => expired(id, Number(reply[1])))
    } catch (err) {
      // Not renewed from here on: the lease runs out again and a later sweep (here or elsewhere) retries.
      if (this.#held.get(id) === h) this.#held.delete(id)
      this.#logger.warn(`session ${id}: closing the turn its owner left open failed; retried once the lease runs out`, {
        error: String(err),
      })
    }
  }

  #lose(sessionId: string, why: string): void {
    if (!this.#held.delete(sessionId)) return
    this.#logger.warn(`session ${sessionId}: lease lost (${why})`)
    this.#hooks.lost(sessionId)
  }
}
