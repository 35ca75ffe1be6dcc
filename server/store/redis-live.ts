/**
 * The singular family's live sessions and bearer tokens in the Redis store, shared by every
 * instance (docs/scale-out.md "Session tokens and live sessions"):
 *
 *   chimera:live              sorted set, session id scored by its last touch (ms since the epoch)
 *   chimera:s:{<id>}:token    string, the SHA-256 digest (hex) of the session's current token
 *   chimera:token:<digest>    string, the session id of that token
 *
 * A session is live while its score is within the idle TTL (`ttlMs`; 0: until deleted), as a
 * session stays in one server's memory until it is evicted idle; a token is valid while its
 * session is live. Only digests are stored: Redis never holds a usable token. Entries past the
 * TTL are dropped when the listing is read; the token keys expire with the TTL (renewed by touches).
 * A delete is announced on the channel `chimera:forgotten` (the session id), so every instance
 * ends its streams of the session as the deleting one does.
 */
import type { RedisClientType } from '@redis/client'
import { keys, LIVE, TOKEN_PREFIX, unavailable } from './redis-shared.ts'
import type { LiveSessions } from './types.ts'

// KEYS: live, token, meta. ARGV: id, now, ttl ms, if-live (1/0), token prefix. Touches a stored
// session (GT: a later touch wins), renewing the token keys' expiry; with if-live, only a session
// that is live.
const TOUCH = `
if redis.call('EXISTS', KEYS[3]) == 0 then return 0 end
local ttl = tonumber(ARGV[3])
if ARGV[4] == '1' then
  local sc = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if not sc or (ttl > 0 and tonumber(sc) < tonumber(ARGV[2]) - ttl) then return 0 end
end
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
if ttl > 0 then
  local d = redis.call('GET', KEYS[2])
  if d then
    redis.call('PEXPIRE', KEYS[2], ttl)
    redis.call('PEXPIRE', ARGV[5] .. d, ttl)
  end
end
return 1
`
// KEYS: meta, token, live. ARGV: id, digest, now, ttl ms, token prefix. The new token replaces
// the old one (dead at once); the session is touched. 0: no such session.
const SET_TOKEN = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local old = redis.call('GET', KEYS[2])
if old then redis.call('DEL', ARGV[5] .. old) end
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
  redis.call('SET', ARGV[5] .. ARGV[2], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[2])
  redis.call('SET', ARGV[5] .. ARGV[2], ARGV[1])
end
redis.call('ZADD', KEYS[3], 'GT', ARGV[3], ARGV[1])
return 1
`
// KEYS: token. ARGV: token prefix. Drops the session's token (both keys).
export const DROP_TOKEN = `
local old = redis.call('GET', KEYS[1])
if old then redis.call('DEL', ARGV[1] .. old) end
redis.call('DEL', KEYS[1])
return 1
`
// KEYS: token-by-digest, live. ARGV: now, ttl ms. → the session id when its session is live.
const SESSION_OF = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
local sc = redis.call('ZSCORE', KEYS[2], id)
local ttl = tonumber(ARGV[2])
if not sc or (ttl > 0 and tonumber(sc) < tonumber(ARGV[1]) - ttl) then return false end
return id
`

/** The channel a deleted session's id is published on. */
const FORGOTTEN = 'chimera:forgotten'

export class RedisLiveSessions implements LiveSessions {
  readonly #client: RedisClientType
  readonly #ttlMs: number

  /** `ttlMs`: the idle TTL of sessions (the HTTP `--session-ttl`); 0: live until deleted. */
  constructor(client: RedisClientType, ttlMs: number) {
    this.#client = client
    this.#ttlMs = Number.isFinite(ttlMs) && ttlMs > 0 ? Math.ceil(ttlMs) : 0
  }

  async #run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      throw unavailable(err)
    }
  }

  #touch(id: string, at: number, ifLive: boolean): Promise<unknown> {
    return this.#client.eval(TOUCH, {
      keys: [LIVE, keys(id).token, keys(id).meta],
      arguments: [id, String(at), String(this.#ttlMs), ifLive ? '1' : '0', TOKEN_PREFIX],
    })
  }

  touch(sessionId: string, opts: { ifLive?: boolean } = {}): Promise<boolean> {
    return this.#run(async () => (await this.#touch(sessionId, Date.now(), opts.ifLive ?? false)) === 1)
  }

  async touched(entries: ReadonlyMap<string, number>): Promise<void> {
    if (entries.size === 0) return
    await this.#run(() => Promise.all([...entries].map(([id, at]) => this.#touch(id, at, false))))
  }

  async list(): Promise<string[]> {
    return this.#run(async () => {
      if (this.#ttlMs === 0) return this.#client.zRange(LIVE, 0, -1, { REV: true })
      const since = Date.now() - this.#ttlMs
      await this.#client.zRemRangeByScore(LIVE, '-inf', `(${since}`)
      return this.#client.zRange(LIVE, '+inf', since, { BY: 'SCORE', REV: true })
    })
  }

  async forget(sessionId: string): Promise<void> {
    await this.#run(async () => {
      await this.#client.zRem(LIVE, sessionId)
      await this.#client.eval(DROP_TOKEN, { keys: [keys(sessionId).token], arguments: [TOKEN_PREFIX] })
      await this.#client.publish(FORGOTTEN, sessionId)
    })
  }

  onForgotten(forgotten: (sessionId: string) => void): () => void {
    // A connection of its own (subscribed, it runs no other command), silent while nothing is
    // deleted: no ping, no silence limit; it reconnects and subscribes again by itself.
    const sub = this.#client.duplicate({
      pingInterval: undefined,
      socket: { connectTimeout: 5_000, reconnectStrategy: (n: number) => Math.min(50 * 2 ** Math.min(n, 10), 2_000) },
    })
    sub.on('error', () => {})
    let stopped = false
    void (async () => {
      try {
        await sub.connect()
        if (stopped) return sub.destroy()
        await sub.subscribe(FORGOTTEN, (id) => forgotten(id))
      } catch {
        // Unreachable: a stream of a session deleted meanwhile ends when this instance next reads it.
        if (sub.isOpen) sub.destroy()
      }
    })()
    return () => {
      stopped = true
      if (sub.isOpen) sub.destroy()
    }
  }

  async setToken(sessionId: string, digest: string): Promise<boolean> {
    const k = keys(sessionId)
    const set = await this.#run(() =>
      this.#client.eval(SET_TOKEN, {
        keys: [k.meta, k.token, LIVE],
        arguments: [sessionId, digest, String(Date.now()), String(this.#ttlMs), TOKEN_PREFIX],
      }),
    )
    return set === 1
  }

  async dropToken(sessionId: string): Promise<void> {
    await this.#run(() => this.#client.eval(DROP_TOKEN, { keys: [keys(sessionId).token], arguments: [TOKEN_PREFIX] }))
  }

  async sessionOfToken(digest: string): Promise<string | undefined> {
    const id = await this.#run(() =>
      this.#client.eval(SESSION_OF, {
        keys: [TOKEN_PREFIX + digest, LIVE],
        arguments: [String(Date.now()), String(this.#ttlMs)],
      }),
    )
    return typeof id === 'string' ? id : undefined
  }
}
