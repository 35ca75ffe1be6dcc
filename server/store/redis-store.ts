/**
 * The Redis store (docs/scale-out.md, docs/decisions/0310-redis-store.md): the `EventStore` and
 * `AuditStore` of instances that share one Redis, selected by `--store redis://host:port/db` or
 * `CHIMERA_STORE`. Keys (the session id in braces, so a session's keys share a hash slot; not Redis Cluster: the create and summary scripts also touch the listing index):
 *
 *   chimera:s:{<id>}:events   stream, one entry per event, id `<seq>-0`, field `e` = the event's JSON
 *   chimera:s:{<id>}:meta     string, the SessionMeta JSON (its existence is the session's)
 *   chimera:s:{<id>}:summary  string, the SessionSummary JSON
 *   chimera:s:{<id>}:queued   hash, message_id → QueuedPrompt JSON (accepted, not yet started)
 *   chimera:sessions          sorted set, id scored by its start (ms): the listing and runs index
 *   chimera:audit             list of AuditRecord JSON (always/never decisions), oldest first
 *   chimera:s:{<id>}:owner    string, the session's lease (redis-leases.ts)
 *   chimera:leases            sorted set, id scored by when its lease runs out: the sweep's list
 *
 * Acknowledged means accepted by Redis: every write resolves only after Redis answered it, and
 * each append is one Lua script that checks the session exists and that `seq` is the next
 * (XLEN + 1) before `XADD`, so stream ids and `seq` are the same numbers on every instance. A
 * write that cannot reach Redis fails at once (no offline queue) with `store_unavailable`; the
 * client reconnects with backoff in the background.
 *
 * Live events: a session with subscribers on this instance has one blocking connection reading
 * `XREAD BLOCK` from the last seq it delivered; this instance's own appends are delivered as
 * soon as Redis accepted them, and both paths go through one per-session cursor, so each event
 * reaches a listener once and in order. `stream()` is the shared catch-up-plus-live stream
 * (event-stream.ts) over that subscription and `XRANGE` pages: gap-free at the seam, bounded per
 * consumer. Undo snapshots are not here: they stay beside the workspace (snapshots.ts).
 */
import { createClient, type RedisClientType } from '@redis/client'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { noopLogger, type Logger } from '../log.ts'
import { auditRecords, type AuditRecord, type AuditStore } from './audit-store.ts'
import { ChimeraError, sessionNotFound } from '../errors.ts'
import { streamEvents } from './event-stream.ts'
import { RedisBus } from './redis-bus.ts'
import { LEASE_LUA, RedisLeases } from './redis-leases.ts'
import { DROP_TOKEN, RedisLiveSessions } from './redis-live.ts'
import { ListenerRegistry } from './listeners.ts'
import { agentAllowed, applyListFilter, pageOf, startedMs } from './listing.ts'
import { isSessionId } from './paths.ts'
import { AUDIT, INDEX, keys, LEASES, LIVE, STORE_RETRY_AFTER_S, TOKEN_PREFIX, unavailable } from './redis-shared.ts'
import { sortQueued } from './queued-prompts.ts'
import type {
  AgentPrefix,
  EventListener,
  EventStore,
  ListFilter,
  LoadedSession,
  PageQuery,
  QueuedPrompt,
  SessionMeta,
  SessionPage,
  StoredSession,
  StoredSummary,
  StreamOptions,
} from './types.ts'
import {
  checkSessionId,
  metaProblem,
  minimalSummary,
  validateEvent,
  validateMeta,
  validateSummary,
} from './validate.ts'

type Client = RedisClientType

/** Events per `XRANGE` page of a catch-up read, and per `XREAD` of a live subscription. */
const PAGE_EVENTS = 1024
/** How long one `XREAD BLOCK` waits before it is reissued (a silent connection is noticed). */
const BLOCK_MS = 5_000
/** Reconnect backoff: 50 ms doubling to this cap. */
const MAX_BACKOFF_MS = 2_000
/**
 * How long a command may wait for Redis's answer by default. A Redis that stops answering without closing
 * the connection (a stopped process, a partition) fails the write as `store_unavailable` after
 * this, instead of holding an acknowledgement until TCP gives up. The blocking reader's own
 * limit is its `BLOCK` wait plus this.
 */
const COMMAND_TIMEOUT_MS = 10_000

/** Summaries per `MGET` of a listing or scan. */
const SCAN_CHUNK = 500

// KEYS: meta, events[, owner]. ARGV: seq, json[, instance id]. Appends iff the session exists, the
// lease (when given) is this instance's, and seq = XLEN + 1; the same event again (a retry after a
// lost reply) is accepted as already there.
const APPEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('NOSESSION no such session') end
if KEYS[3] and redis.call('GET', KEYS[3]) ~= ARGV[3] then return redis.error_reply('FENCED this instance does not hold the session lease') end
local seq = tonumber(ARGV[1])
local len = redis.call('XLEN', KEYS[2])
if seq == len + 1 then
  redis.call('XADD', KEYS[2], ARGV[1] .. '-0', 'e', ARGV[2])
  return 1
end
if seq <= len then
  local got = redis.call('XRANGE', KEYS[2], ARGV[1] .. '-0', ARGV[1] .. '-0')
  if got[1] and got[1][2][2] == ARGV[2] then return 0 end
end
return redis.error_reply('SEQ expected ' .. (len + 1))
`
// KEYS: meta, summary, index[, owner, leases]. ARGV: id, meta json, summary json, score[, instance id, lease ms].
// With an owner key the creating instance takes the session's lease in the same step.
const CREATE = `${LEASE_LUA}
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('EXISTS the session exists') end
if KEYS[4] then lease_take(KEYS[4], KEYS[5], ARGV[1], ARGV[5], ARGV[6]) end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
return 1
`
// KEYS: meta, summary, index. ARGV: id, summary json, score, event count ('' if none).
// A summary of fewer events than the stored one's is older (a copy that lost the session wrote it
// late): the stored one stays.
const SUMMARY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('NOSESSION no such session') end
local stored = ARGV[4] ~= '' and redis.call('GET', KEYS[2])
if stored then
  local ok, cur = pcall(cjson.decode, stored)
  if ok and type(cur) == 'table' and type(cur.event_count) == 'number' and tonumber(ARGV[4]) < cur.event_count then return 0 end
end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1
`
// KEYS: meta, queued[, owner]. ARGV: message id, json[, instance id]: as APPEND, fenced by the lease.
const QUEUE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('NOSESSION no such session') end
if KEYS[3] and redis.call('GET', KEYS[3]) ~= ARGV[3] then return redis.error_reply('FENCED this instance does not hold the session lease') end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`

export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). */
  url: string
  logger?: Logger
  /** Catch-up page size (tests). */
  pageEvents?: number
  /** How long a command may wait for Redis's answer (default 10 s). */
  commandTimeoutMs?: number
  /**
   * This instance's id, for serving with other instances: sessions are then leased (the creating
   * or claiming instance owns a running session, redis-leases.ts) and writes are fenced by the
   * lease. Absent: no leases (one instance, or tools that only read).
   */
  instanceId?: string
  /** Lease time-to-live and renewal period (ms; defaults 5 s and 1.5 s). */
  leaseTtlMs?: number
  leaseRenewMs?: number
}

/** `redis://host:port/db` as given, or undefined for the file store; a bad value is a usage error. */
export function storeUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = flag ?? env.CHIMERA_STORE
  if (v === undefined || v === '' || v === 'file') return undefined
  let u: URL
  try {
    u = new URL(v)
  } catch {
    throw new RangeError('--store must be "file" or redis://host:port/db')
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new RangeError(`--store must be "file" or redis://host:port/db, got ${JSON.stringify(shownUrl(v))}`)
  if (u.pathname !== '' && u.pathname !== '/' && !/^\/\d{1,2}$/.test(u.pathname))
    throw new RangeError(
      `--store: the database in ${JSON.stringify(shownUrl(v))} must be a number (redis://host:port/0)`,
    )
  return v
}

/** The URL without its password, for messages. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url
  }
}

/** Map a script's error reply (or anything else Redis said) to the store's errors. */
function scriptError(err: unknown, sessionId: string, seq?: number): ChimeraError {
  const msg = err instanceof Error ? err.message : String(err)
  if (/\bNOSESSION\b/.test(msg)) return sessionNotFound(sessionId)
  if (/\bFENCED\b/.test(msg))
    return new ChimeraError(
      'store_unavailable',
      `this instance no longer holds the lease of session ${sessionId} (another instance runs it now); retry`,
      { detail: { retry_after_s: STORE_RETRY_AFTER_S }, cause: err },
    )
  if (/\bEXISTS the session\b/.test(msg))
    return new ChimeraError('session_exists', `session ${sessionId} already exists`)
  const m = /\bSEQ expected (\d+)/.exec(msg)
  if (m) {
    const expected = Number(m[1])
    return new ChimeraError(
      'seq_mismatch',
      `event seq ${seq} rejected for session ${sessionId}: expected ${expected}`,
      {
        detail: { expected, got: seq },
      },
    )
  }
  return unavailable(err)
}

/** JSON text parsed, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

const seqOf = (streamId: string): number => Number(streamId.slice(0, streamId.indexOf('-')))
const parseEvent = (text: string): AnyEvent => JSON.parse(text) as AnyEvent

/** What this instance follows of one session with live subscribers. */
interface Watch {
  /** The last seq delivered to listeners; undefined until the starting point is known. */
  cursor: number | undefined
  stopped: boolean
  reader: Client | undefined
}

/** One connection (commands) plus one blocking reader per watched session. */
export class RedisEventStore implements EventStore {
  readonly url: string
  readonly #logger: Logger
  readonly #client: Client
  readonly #pageEvents: number
  readonly #commandTimeoutMs: number
  readonly #listeners: ListenerRegistry
  readonly #watches = new Map<string, Watch>()
  readonly #leases: RedisLeases | undefined
  #bus: RedisBus | undefined
  #connected = false
  #closed = false

  constructor(opts: RedisStoreOptions) {
    this.url = opts.url
    this.#logger = opts.logger ?? noopLogger
    this.#pageEvents = opts.pageEvents ?? PAGE_EVENTS
    this.#commandTimeoutMs = opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS
    this.#listeners = new ListenerRegistry(this.#logger)
    this.#client = this.#newClient('commands')
    this.#leases =
      opts.instanceId === undefined
        ? undefined
        : new RedisLeases(this.#client, {
            instanceId: opts.instanceId,
            logger: this.#logger,
            ...(opts.leaseTtlMs ? { ttlMs: opts.leaseTtlMs } : {}),
            ...(opts.leaseRenewMs ? { renewMs: opts.leaseRenewMs } : {}),
          })
  }

  /** The session leases of this instance (present when the store was given an `instanceId`). */
  get leases(): RedisLeases | undefined {
    return this.#leases
  }

  /**
   * Start forwarding between instances: requests addressed to this instance are run by `handle`
   * (redis-bus.ts). Needs an `instanceId`; one bus per store.
   */
  bus(handle: (payload: unknown) => Promise<unknown>): RedisBus {
    if (!this.#leases) throw new Error('forwarding needs an instance id')
    if (!this.#bus) {
      this.#bus = new RedisBus({
        instanceId: this.#leases.instanceId,
        logger: this.#logger,
        client: this.#client,
        reader: () => this.#newClient('inbox', BLOCK_MS + this.#commandTimeoutMs, false),
        handle,
      })
      this.#bus.start()
    }
    return this.#bus
  }

  /** Connect (once, no retry: an unreachable Redis at start is one clear error) and check persistence. */
  async connect(): Promise<void> {
    try {
      await this.#client.connect()
    } catch (err) {
      this.#client.destroy()
      throw new Error(
        `cannot reach the Redis store at ${shownUrl(this.url)}: ${err instanceof Error ? err.message : String(err)}`,
      )
    }
    this.#connected = true
    this.#leases?.start()
    try {
      const info = await this.#client.info('persistence')
      if (/aof_enabled:0/.test(info))
        this.#logger.warn(
          `the Redis store at ${shownUrl(this.url)} runs without the append-only file (appendonly no): a Redis restart loses acknowledged events`,
        )
    } catch {
      // INFO may be disabled on a managed Redis: nothing to say then.
    }
  }

  /** The always/never decisions, kept in the same Redis over the same connection. */
  auditStore(): AuditStore {
    return new RedisAuditStore(this.#client)
  }

  /** The live sessions and their token digests, shared by the instances (redis-live.ts); `ttlMs`: the idle TTL. */
  liveSessions(ttlMs: number): RedisLiveSessions {
    return new RedisLiveSessions(this.#client, ttlMs)
  }

  /** Close every connection (pending blocking reads end). */
  async close(): Promise<void> {
    // A clean stop gives its leases up: the next command claims the sessions at once.
    await this.#leases?.stop(this.#client.isReady)
    this.#bus?.close()
    this.#closed = true
    for (const id of [...this.#watches.keys()]) this.#unwatch(id)
    if (this.#client.isOpen) await this.#client.close().catch(() => this.#client.destroy())
  }

  /**
   * A connection. `silenceMs`: a socket that brings no byte for this long is closed, failing what
   * waits on it as `store_unavailable` (a Redis that stops answering without closing the
   * connection would otherwise hold a write until TCP gives up); the command connection pings
   * at a third of it so that an idle, healthy one is never closed.
   */
  #newClient(role: string, silenceMs = this.#commandTimeoutMs, ping = true): Client {
    const client: Client = createClient({
      url: this.url,
      // A write while disconnected fails at once (503 / an error), never waits in a queue.
      disableOfflineQueue: true,
      commandOptions: { timeout: silenceMs },
      ...(ping ? { pingInterval: Math.max(100, Math.floor(silenceMs / 3)) } : {}),
      socket: {
        connectTimeout: 5_000,
        socketTimeout: silenceMs,
        reconnectStrategy: (retries: number, cause: Error) => {
          // At start an unreachable Redis is an error, not a retry loop; later, back off and retry.
          if (!this.#connected || this.#closed) return cause
          return Math.min(50 * 2 ** Math.min(retries, 10), MAX_BACKOFF_MS)
        },
      },
    })
    let down = false
    client.on('error', (err: unknown) => {
      if (down || this.#closed) return
      down = true
      this.#logger.warn(`Redis store (${role}): ${err instanceof Error ? err.message : String(err)}; reconnecting`)
    })
    client.on('ready', () => {
      if (down) this.#logger.info(`Redis store (${role}): reconnected`)
      down = false
    })
    return client
  }

  async #run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      throw unavailable(err)
    }
  }

  async create(meta: SessionMeta, summary: SessionSummary): Promise<void> {
    validateMeta(meta)
    validateSummary(meta.session_id, summary)
    const id = meta.session_id
    const k = keys(id)
    try {
      const lease = this.#leases
      await this.#client.eval(CREATE, {
        keys: [k.meta, k.summary, INDEX, ...(lease ? [k.owner, LEASES] : [])],
        arguments: [
          id,
          JSON.stringify(meta),
          JSON.stringify(summary),
          String(scoreOf(summary, meta)),
          ...(lease ? [lease.instanceId, String(lease.ttlMs)] : []),
        ],
      })
      lease?.created(id)
    } catch (err) {
      throw scriptError(err, id)
    }
  }

  /** The fencing part of a write: the owner key and this instance's id, when leases are on. */
  #fence(k: ReturnType<typeof keys>): { keys: string[]; arguments: string[] } {
    return this.#leases ? { keys: [k.owner], arguments: [this.#leases.instanceId] } : { keys: [], arguments: [] }
  }

  async append(event: AnyEvent): Promise<void> {
    const e = validateEvent(event)
    const id = e.session_id
    const k = keys(id)
    let added: unknown
    try {
      const fence = this.#fence(k)
      added = await this.#client.eval(APPEND, {
        keys: [k.meta, k.events, ...fence.keys],
        arguments: [String(e.seq), JSON.stringify(e), ...fence.arguments],
      })
    } catch (err) {
      throw scriptError(err, id, e.seq)
    }
    if (added === 1) this.#deliver(id, e)
  }

  /** Hand a persisted event to this instance's listeners, once, in order (either path). */
  #deliver(sessionId: string, e: AnyEvent): void {
    const w = this.#watches.get(sessionId)
    if (!w || w.cursor === undefined || e.seq !== w.cursor + 1) return
    w.cursor = e.seq
    this.#listeners.notify(e)
  }

  async read(sessionId: string, afterSeq = 0): Promise<AnyEvent[]> {
    const out: AnyEvent[] = []
    let cursor = afterSeq
    for (;;) {
      const page = await this.readPage(sessionId, cursor)
      out.push(...page.events)
      if (!page.more || page.events.length === 0) return out
      cursor = page.events[page.events.length - 1]!.seq
    }
  }

  /** A page of events after `afterSeq` (`XRANGE` from `afterSeq + 1`), `more` when it was full. */
  async readPage(
    sessionId: string,
    afterSeq: number,
    limit = this.#pageEvents,
  ): Promise<{ events: AnyEvent[]; more: boolean }> {
    checkSessionId(sessionId)
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0)
      throw new RangeError(`afterSeq must be a non-negative integer, got ${afterSeq}`)
    const k = keys(sessionId)
    const [exists, entries] = await this.#run(() =>
      Promise.all([
        this.#client.exists(k.meta),
        this.#client.xRange(k.events, `${afterSeq + 1}-0`, '+', { COUNT: limit }),
      ]),
    )
    if (exists === 0) throw sessionNotFound(sessionId)
    const events = (entries ?? []).map((m) => parseEvent(String(m.message.e)))
    return { events, more: events.length >= limit }
  }

  async queuePrompt(sessionId: string, prompt: QueuedPrompt): Promise<void> {
    checkSessionId(sessionId)
    const k = keys(sessionId)
    try {
      const fence = this.#fence(k)
      await this.#client.eval(QUEUE, {
        keys: [k.meta, k.queued, ...fence.keys],
        arguments: [prompt.message_id, JSON.stringify(prompt), ...fence.arguments],
      })
    } catch (err) {
      throw scriptError(err, sessionId)
    }
  }

  async unqueuePrompt(sessionId: string, messageId: string): Promise<void> {
    checkSessionId(sessionId)
    await this.#run(() => this.#client.hDel(keys(sessionId).queued, messageId))
  }

  async writeSummary(sessionId: string, summary: SessionSummary): Promise<void> {
    validateSummary(sessionId, summary)
    const k = keys(sessionId)
    try {
      await this.#client.eval(SUMMARY, {
        keys: [k.meta, k.summary, INDEX],
        arguments: [sessionId, JSON.stringify(summary), String(scoreOf(summary)), String(summary.event_count ?? '')],
      })
    } catch (err) {
      throw scriptError(err, sessionId)
    }
  }

  async load(sessionId: string): Promise<LoadedSession | undefined> {
    checkSessionId(sessionId)
    return this.#read(sessionId, true)
  }

  /** Meta, summary (from the meta when damaged), events and, with `queued`, the queued prompts. */
  async #read(sessionId: string, withQueued: boolean): Promise<LoadedSession | undefined> {
    const k = keys(sessionId)
    const [metaText, summaryText, queued] = await this.#run(() =>
      Promise.all([
        this.#client.get(k.meta),
        this.#client.get(k.summary),
        withQueued ? this.#client.hVals(k.queued) : Promise.resolve([]),
      ]),
    )
    if (metaText === null) return undefined
    const meta = parseJson(metaText)
    const problem =
      metaProblem(meta) ??
      ((meta as SessionMeta).session_id !== sessionId ? 'session_id does not match its key' : undefined)
    if (problem !== undefined) {
      this.#logger.warn('Redis store: invalid session meta; session treated as absent', {
        session_id: sessionId,
        reason: problem,
      })
      return undefined
    }
    const events = await this.read(sessionId, 0)
    let summary: SessionSummary
    try {
      summary = validateSummary(sessionId, parseJson(summaryText ?? 'null'))
    } catch {
      summary = minimalSummary(meta as SessionMeta, events.length)
    }
    const prompts: QueuedPrompt[] = []
    for (const text of queued) {
      const p = parseJson(text)
      if (typeof p === 'object' && p !== null) prompts.push(p as QueuedPrompt)
    }
    return { meta: meta as SessionMeta, summary, events, queued: sortQueued(prompts), repaired: false }
  }

  async list(filter: ListFilter = {}): Promise<SessionSummary[]> {
    return applyListFilter(await this.#summaries(filter), filter)
  }

  async listPage(query: PageQuery = {}): Promise<SessionPage> {
    return pageOf(await this.#summaries(query), query)
  }

  /** The valid summaries of the indexed sessions that can pass `filter` (agents, `since` as a score range). */
  async #summaries(filter: ListFilter): Promise<SessionSummary[]> {
    const found: SessionSummary[] = []
    for await (const { session_id, summary } of this.#scan(filter, filter.since?.getTime())) {
      try {
        found.push(validateSummary(session_id, summary))
      } catch {
        this.#logger.warn('Redis store: skipping an unreadable summary', { session_id })
      }
    }
    return found
  }

  scanSummaries(opts: { agents?: AgentPrefix[] } = {}): AsyncIterable<StoredSummary> {
    return this.#scan(opts)
  }

  /** Every indexed session (of `filter.agents`, started at or after `sinceMs`) with its summary as stored. */
  async *#scan(filter: { agents?: AgentPrefix[] }, sinceMs?: number): AsyncGenerator<StoredSummary> {
    const ids = await this.#run(() =>
      sinceMs === undefined
        ? this.#client.zRange(INDEX, 0, -1, { REV: true })
        : this.#client.zRange(INDEX, '+inf', sinceMs, { BY: 'SCORE', REV: true }),
    )
    const wanted = ids.filter((id) => agentAllowed(id, filter))
    for (let i = 0; i < wanted.length; i += SCAN_CHUNK) {
      const chunk = wanted.slice(i, i + SCAN_CHUNK)
      const texts = await this.#run(() => this.#client.mGet(chunk.map((id) => keys(id).summary)))
      for (let j = 0; j < chunk.length; j++) {
        const text = texts[j]
        if (text === null || text === undefined) continue
        yield { session_id: chunk[j]!, summary: parseJson(text) }
      }
    }
  }

  async readSession(sessionId: string): Promise<StoredSession | undefined> {
    if (!isSessionId(sessionId)) return undefined
    const loaded = await this.#read(sessionId, false)
    return loaded && { meta: loaded.meta, summary: loaded.summary, events: loaded.events }
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    checkSessionId(sessionId)
    const off = this.#listeners.add(sessionId, listener)
    if (!this.#watches.has(sessionId)) this.#watch(sessionId)
    let done = false
    return () => {
      if (done) return
      done = true
      off()
      if (!this.#listeners.has(sessionId)) this.#unwatch(sessionId)
    }
  }

  stream(sessionId: string, opts: StreamOptions = {}): AsyncIterable<AnyEvent> {
    checkSessionId(sessionId)
    return streamEvents(
      {
        subscribe: (id, l) => this.subscribe(id, l),
        read: (id, after) => this.readPage(id, after),
      },
      sessionId,
      opts,
    )
  }

  async remove(sessionId: string): Promise<void> {
    checkSessionId(sessionId)
    const k = keys(sessionId)
    await this.#run(async () => {
      await this.#client.del([k.meta, k.summary, k.events, k.queued, k.owner])
      await this.#client.zRem(INDEX, sessionId)
      await this.#client.zRem(LEASES, sessionId)
      // Its bearer token and its place among the live sessions go with it, whoever deletes it.
      await this.#client.zRem(LIVE, sessionId)
      await this.#client.eval(DROP_TOKEN, { keys: [k.token], arguments: [TOKEN_PREFIX] })
    })
  }

  /**
   * Follow a session for this instance's listeners. The starting point is read on the command
   * connection, so it is ordered with this instance's appends and with the catch-up read a stream
   * issues right after subscribing: whatever lands after it is delivered live, whatever before
   * it is in that read.
   */
  #watch(sessionId: string): void {
    const w: Watch = { cursor: undefined, stopped: false, reader: undefined }
    this.#watches.set(sessionId, w)
    const k = keys(sessionId)
    void (async () => {
      let failures = 0
      while (!w.stopped && w.cursor === undefined) {
        try {
          w.cursor = await this.#client.xLen(k.events)
        } catch (err) {
          if (w.stopped) return
          this.#logger.debug('Redis store: watch start failed; retrying', { session_id: sessionId, error: String(err) })
          await pause(backoff(failures++))
        }
      }
      if (w.stopped) return
      const reader = this.#newClient('reader', BLOCK_MS + this.#commandTimeoutMs, false)
      w.reader = reader as Client
      reader.on('error', () => {})
      failures = 0
      while (!w.stopped) {
        try {
          if (!reader.isOpen) await reader.connect()
          const res = await reader.xRead(
            { key: k.events, id: `${w.cursor}-0` },
            { BLOCK: BLOCK_MS, COUNT: PAGE_EVENTS },
          )
          failures = 0
          if (!res || w.stopped) continue
          for (const s of res as { messages: { id: string; message: Record<string, string> }[] }[]) {
            for (const m of s.messages) {
              if (seqOf(m.id) === (w.cursor ?? 0) + 1) this.#deliver(sessionId, parseEvent(String(m.message.e)))
            }
          }
        } catch (err) {
          if (w.stopped) break
          this.#logger.debug('Redis store: live read failed; retrying', { session_id: sessionId, error: String(err) })
          await pause(backoff(failures++))
        }
      }
      reader.destroy()
    })()
  }

  /** A session left this instance's memory: its lease (if held) is given up. */
  release(sessionId: string): void {
    void this.#leases?.release(sessionId).catch(() => {})
  }

  #unwatch(sessionId: string): void {
    const w = this.#watches.get(sessionId)
    if (!w) return
    this.#watches.delete(sessionId)
    w.stopped = true
    // Ends a blocked XREAD at once (the loop sees `stopped` and leaves).
    if (w.reader?.isOpen) w.reader.destroy()
  }
}

/** The index score of a session: its start in ms (0 when nothing says). */
function scoreOf(summary: SessionSummary, meta?: SessionMeta): number {
  const t = startedMs(summary)
  if (Number.isFinite(t)) return t
  const c = meta ? Date.parse(meta.created_at) : Number.NaN
  return Number.isFinite(c) ? c : 0
}

const backoff = (n: number): number => Math.min(50 * 2 ** Math.min(n, 10), MAX_BACKOFF_MS)
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref())

/** The always/never decisions in one Redis list (oldest first), shared by every instance. */
class RedisAuditStore implements AuditStore {
  readonly #client: Client
  constructor(client: Client) {
    this.#client = client
  }
  async load(): Promise<AuditRecord[]> {
    let lines: string[]
    try {
      lines = await this.#client.lRange(AUDIT, 0, -1)
    } catch (err) {
      throw unavailable(err)
    }
    return auditRecords(lines)
  }
  async append(record: AuditRecord): Promise<void> {
    try {
      await this.#client.rPush(AUDIT, JSON.stringify(record))
    } catch (err) {
      throw unavailable(err)
    }
  }
}
