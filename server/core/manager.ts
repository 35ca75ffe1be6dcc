/**
 * The session manager: one per process, shared by every transport the process serves. Many
 * sessions at once, no lock on agent work (each session runs its own turns); the maps are the
 * only shared structures. Sessions persist to the file store unless created with
 * `persist: false`, which keeps them in the (bounded) memory store.
 *
 * A session is in memory at most once: concurrent `get(id)` calls of a stored session share
 * one load. Idle sessions can be evicted (`evictIdle`, driven by the HTTP TTL): eviction
 * cancels the running turn, releases pending permissions and tells `onEvict` listeners (SSE
 * streams end); a persisted session can be loaded again afterwards.
 */
import { realpathSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { Logger } from '../log.ts'
import { noopLogger } from '../log.ts'
import { FileAuditStore, type AuditStore } from '../store/audit-store.ts'
import { listSessions } from '../store/listing.ts'
import { MemoryEventStore } from '../store/memory-store.ts'
import { openEventStore } from '../store/open.ts'
import { chimeraHome, isSessionId, newSessionId } from '../store/paths.ts'
import type {
  AgentPrefix,
  EventStore,
  SessionLeases,
  ListFilter,
  PageQuery,
  SessionDetail,
  SessionMeta,
  SessionPage,
} from '../store/types.ts'
import { builtinTools } from '../tools/registry.ts'
import { lspTools } from '../tools/lsp.ts'
import type { LspFactory } from '../lsp/provider.ts'
import type { SandboxMode, Tool } from '../tools/types.ts'
import type { FileHistory } from './file-history.ts'
import { ModelRegistry } from './model-registry.ts'
import { isKnownTool, PermissionAuditLog, resolveRules, type ApprovalPolicy, type Rule } from './permissions.ts'
import { loadProjectConfig } from './project-config.ts'
import { isToolPattern } from './tool-patterns.ts'
import { Session, type SessionDeps } from './session.ts'
import { SessionRouter, type ForwardConnect } from './session-router.ts'
import { checkMode } from './modes.ts'
import { ChimeraError, sessionNotFound } from '../errors.ts'
import { sessionHeld } from '../store/session-owner.ts'
import type { CommandRenderer } from './slash-commands.ts'
import { startupMark } from '../startup-trace.ts'
import { randomReady } from '../platform/random.ts'
import { settleWithin } from '../settle-within.ts'

export interface ManagerOptions {
  agent: AgentPrefix
  /** Default working directory for new sessions. */
  cwd: string
  model?: string
  mode?: string
  allowedTools?: string[]
  approval?: ApprovalPolicy
  sandbox?: SandboxMode
  /** Command-line permission overrides (`--permission Tool=rule`). */
  permissionOverrides?: ReadonlyMap<string, Rule>
  /** Bash may run without bubblewrap in the confined modes (`--allow-unconfined`). */
  allowUnconfined?: boolean
  home?: string
  logger?: Logger
  /** The models and their providers (server/providers/registry.ts: `buildModelRegistry`, `offlineModels`). */
  models: ModelRegistry
  tools?: ReadonlyMap<string, Tool>
  /** Inject a store (tests, other engines); default the file store under CHIMERA_HOME. */
  store?: EventStore
  /**
   * Leases of running sessions when several instances share the store (docs/scale-out.md): a
   * session is loaded with its accepted prompts, and its writes go through, only on the instance
   * that holds its lease; elsewhere it is read only.
   */
  leases?: SessionLeases
  /**
   * With `leases`: the channel that forwards a command to the instance that runs its session
   * (session-router.ts); absent, a command for a session another instance runs fails with the reason.
   */
  forward?: ForwardConnect
  /** How long a forwarded command waits for its owner's answer (default FORWARD_TIMEOUT_MS; `CHIMERA_FORWARD_TIMEOUT_MS`). */
  forwardTimeoutMs?: number
  /**
   * With `leases`: how long a copy given up here (its lease lost) may go on stopping before it is
   * fenced (it writes nothing more) and the session is loaded without it (default 5000 ms).
   */
  staleSettleMs?: number
  /** Where always/never decisions live; default CHIMERA_HOME/permissions/audit.jsonl. */
  auditStore?: AuditStore
  /** The file-level undo history of a session (snapshots); none: undo rewinds messages only. */
  history?: (meta: SessionMeta) => FileHistory
  /** Custom slash commands for a working directory. */
  commands?: (cwd: string) => CommandRenderer
  /** Real paths tools must never touch, besides CHIMERA_HOME. */
  protectedPaths?: string[]
  /**
   * LSP for sessions (docs/lsp.md): makes the manager of a working directory, lazily on the first
   * LSP tool call. When set, the five LSP tools join the tool registry; absent: no LSP tools.
   */
  lsp?: LspFactory
}

export interface CreateOptions {
  cwd?: string
  model?: string
  mode?: string
  allowedTools?: string[]
  maxSteps?: number
  persist?: boolean
  approval?: ApprovalPolicy
}

export type EvictListener = (session: Session, reason: 'idle' | 'deleted') => void

export class SessionManager {
  readonly opts: ManagerOptions
  readonly models: ModelRegistry
  readonly store: EventStore
  readonly memory = new MemoryEventStore()
  readonly audit: PermissionAuditLog
  readonly tools: ReadonlyMap<string, Tool>
  readonly logger: Logger
  readonly home: string
  readonly #sessions = new Map<string, Session>()
  readonly #loading = new Map<string, Promise<Session>>()
  /** Copies loaded while this instance held the session's lease: they took its queued prompts. */
  readonly #owned = new WeakSet<Session>()
  /**
   * Copies that lost the lease here and may still be stopping (a tool ignoring its cancel), by
   * session: a load that will run the session waits for them, so what they still write comes first.
   */
  readonly #stopping = new Map<string, Promise<void>>()
  /** `shutdown` has begun: a load that ends now installs nothing. */
  #shuttingDown = false
  /** Sessions being deleted: unknown to every reader from the delete's first step on. */
  readonly #deleting = new Set<string>()
  readonly #evictListeners = new Set<EvictListener>()
  readonly #protected: string[]
  /** Runs a session command where its session runs (this instance, or the lease holder's). */
  readonly router: SessionRouter

  constructor(opts: ManagerOptions) {
    this.opts = opts
    this.home = opts.home ?? chimeraHome()
    this.logger = opts.logger ?? noopLogger
    this.models = opts.models
    this.store = opts.store ?? openEventStore(this.home, { logger: this.logger, agent: opts.agent })
    this.audit = new PermissionAuditLog(
      opts.auditStore ?? new FileAuditStore(join(this.home, 'permissions', 'audit.jsonl')),
    )
    this.tools = opts.lsp ? withLspTools(opts.tools ?? builtinTools()) : (opts.tools ?? builtinTools())
    if (opts.allowedTools) checkToolNames(opts.allowedTools)
    this.models.check(opts.model ?? this.models.defaultModel)
    this.#protected = [realOrSelf(this.home), ...(opts.protectedPaths ?? []).map(realOrSelf)]
    opts.leases?.setHooks({
      // Idle: runs nothing here (no turn, no queued work, no permission request waiting).
      idle: (id) => {
        const s = this.#sessions.get(id)
        return !s || (s.status === 'idle' && s.pendingPermissions().length === 0)
      },
      lost: (id) => this.leaseLost(id),
      // Swept (its owner's lease ran out): closed exactly as a command's claim closes it; a
      // close the store refused fails the sweep, which is tried again once the lease runs out.
      expired: async (id, length) => {
        await this.takeOver(id, length)
        if (this.#sessions.get(id)?.turnOpen)
          throw new ChimeraError('store_unavailable', `session ${id}: the interrupted turn could not be closed`)
      },
    })
    this.router = new SessionRouter({
      manager: this,
      logger: this.logger,
      ...(opts.leases ? { leases: opts.leases } : {}),
      ...(opts.forward ? { connect: opts.forward } : {}),
      ...(opts.forwardTimeoutMs !== undefined ? { timeoutMs: opts.forwardTimeoutMs } : {}),
    })
  }

  get defaultModel(): string {
    return this.opts.model ?? this.models.defaultModel
  }

  /** Create a session; validates model, mode and tools before anything is stored. */
  async create(o: CreateOptions = {}): Promise<Session> {
    await randomReady()
    const model = o.model ?? this.defaultModel
    this.models.check(model)
    const mode = o.mode ?? this.opts.mode ?? 'build'
    checkMode(mode)
    const allowed = o.allowedTools ?? this.opts.allowedTools
    if (allowed) checkToolNames(allowed)
    const cwd = o.cwd ?? this.opts.cwd
    const meta: SessionMeta = {
      session_id: newSessionId(this.opts.agent),
      agent: this.opts.agent,
      cwd,
      model,
      mode,
      ...(allowed ? { allowed_tools: allowed } : {}),
      ...(o.maxSteps ? { max_steps: o.maxSteps } : {}),
      approval: o.approval ?? this.opts.approval ?? 'allow',
      created_at: new Date().toISOString(),
    }
    // With a shared store every session is kept there: another instance may be asked to serve it.
    const persist = this.shared || (o.persist ?? true)
    const store = persist ? this.store : this.memory
    const deps = this.#deps(store, meta, persist)
    const session = new Session(meta, deps)
    startupMark('session')
    await store.create(meta, session.summary as SessionSummary)
    startupMark('store')
    this.#sessions.set(meta.session_id, session)
    await deps.commands?.prepare?.()
    return session
  }

  #deps(store: EventStore, meta: SessionMeta, persist: boolean): SessionDeps {
    const config = loadProjectConfig(meta.cwd)
    return {
      store,
      models: this.models,
      tools: this.tools,
      rules: resolveRules({ cwd: meta.cwd, overrides: this.opts.permissionOverrides, config }),
      audit: this.audit,
      approval: meta.approval ?? this.opts.approval ?? 'allow',
      sandbox: this.opts.sandbox ?? 'workspace-write',
      logger: this.logger,
      persist,
      protectedPaths: this.#protected,
      allowUnconfined: this.opts.allowUnconfined ?? false,
      toolEnv: config.env,
      ...(this.opts.history ? { history: this.opts.history(meta) } : {}),
      ...(this.opts.commands ? { commands: this.opts.commands(meta.cwd) } : {}),
      ...(this.opts.lsp ? { lsp: this.opts.lsp } : {}),
      // Other instances list the sessions this one runs: a turn's end is in their listing at once.
      ...(this.shared ? { summaryDelayMs: 0 } : {}),
    }
  }

  /**
   * An idle copy read without the file store's marker (nothing written here since): another
   * process may have taken the session and written meanwhile, so it is checked before use.
   */
  #unheld(s: Session): boolean {
    return s.persist && s.status === 'idle' && this.store.holdsMarker?.(s.id) === false
  }

  /** True when `s` may be used as it is (see {@link #stale} and {@link #unheld}). */
  async #current(s: Session): Promise<boolean> {
    if (this.#stale(s)) return false
    return !this.#unheld(s) || !(await this.store.changedElsewhere?.(s.id, s.lastSeq))
  }

  /** A live session, or one loaded from disk (its history and counter rebuilt exactly), once. */
  get(id: string): Promise<Session> {
    if (this.#deleting.has(id)) return Promise.reject(sessionNotFound(id))
    const live = this.#sessions.get(id)
    if (live && !this.#stale(live)) {
      if (!this.#unheld(live)) return Promise.resolve(live)
      // Written here meanwhile (it holds the marker now): it is current.
      return this.#current(live).then((ok) => (ok || !this.#unheld(live) ? live : this.#reload(id)))
    }
    return this.#reload(id)
  }

  /** Load `id` again (once at a time), replacing the copy in memory. */
  #reload(id: string): Promise<Session> {
    if (this.#deleting.has(id)) return Promise.reject(sessionNotFound(id))
    const live = this.#sessions.get(id)
    if (!isSessionId(id)) return Promise.reject(sessionNotFound(id))
    return this.#loading.get(id) ?? this.#loadOnce(id, { replace: live !== undefined })
  }

  /** {@link #load}, known as the load under way of `id` until it ends. */
  #loadOnce(id: string, opts: { closeOpenTurn?: string; replace?: boolean }): Promise<Session> {
    const loading: Promise<Session> = this.#load(id, opts).finally(() => {
      if (this.#loading.get(id) === loading) this.#loading.delete(id)
    })
    this.#loading.set(id, loading)
    return loading
  }

  /** True when several instances share the store (leases): a stored session is live on some instance. */
  get shared(): boolean {
    return this.opts.leases !== undefined
  }

  /**
   * True for an idle copy of a session another instance may run (this one does not hold its
   * lease): what it says may be out of date, so it is read again from the store before use.
   */
  #stale(s: Session): boolean {
    // A copy of a session another process held (file store) is read again too: that process may
    // have written since, or let it go (then the reload takes it over).
    if (s.heldBy) return true
    return this.opts.leases !== undefined && s.status === 'idle' && !this.opts.leases.holds(s.id)
  }

  async #load(id: string, opts: { closeOpenTurn?: string; replace?: boolean } = {}): Promise<Session> {
    // Held before the read as well as after: a read begun before this instance claimed the
    // session may be older than what the claim found, and is only read from.
    const heldBefore = this.opts.leases?.holds(id) ?? true
    const stopping = heldBefore ? this.#stopping.get(id) : undefined
    if (stopping) await stopping
    const loaded = await this.store.load(id)
    // A delete that began while this load read the disk wins: the session is gone.
    if (!loaded || this.#deleting.has(id)) throw sessionNotFound(id)
    if (this.#shuttingDown) throw new ChimeraError('session_closed', `session ${id}: the server is shutting down`)
    if (loaded.repaired) this.logger.warn(`session ${id}: a torn tail record was dropped on load`)
    const already = this.#sessions.get(id)
    if (already && !opts.replace) return already
    // Accepted prompts are the owner's business: another instance's (or process's) copy only reads.
    const owned = heldBefore && (this.opts.leases?.holds(id) ?? true) && !loaded.heldBy
    // Under leases a turn left open in the log is no copy's here (none runs, or it would not be
    // loaded): the instance that ran it lost the session, which is taken over.
    const closeOpenTurn = opts.closeOpenTurn ?? (this.shared ? TAKEN_OVER : undefined)
    const deps = this.#deps(this.store, loaded.meta, true)
    const session = Session.restore(
      loaded.meta,
      loaded.events,
      deps,
      owned ? loaded.queued : [],
      loaded.heldBy ? { heldBy: loaded.heldBy } : owned && closeOpenTurn !== undefined ? { closeOpenTurn } : {},
    )
    if (owned && this.shared) this.#owned.add(session)
    // The copy replaced is out of date: a summary it still owes would cover the current one.
    already?.drop()
    this.#sessions.set(id, session)
    await deps.commands?.prepare?.()
    return session
  }

  /**
   * This instance has just claimed the session's lease (`length`: the events stored): a copy in
   * memory that is not current (another instance ran turns meanwhile) is replaced by a fresh
   * load, quietly (its streams read the store and go on), and a turn the previous owner left open
   * (it stopped mid-turn) is closed with an `error` that says so before anything else runs.
   */
  async takeOver(id: string, length: number): Promise<void> {
    const before = this.#sessions.get(id)
    // Every load under way (begun before the claim) ends first (bounded: readers may keep loading).
    for (let round = 0, pending = this.#loading.get(id); pending && round < MAX_LOAD_WAITS; round++) {
      await pending.catch(() => {})
      pending = this.#loading.get(id)
    }
    const live = this.#sessions.get(id)
    // Loaded since, while this instance held the lease: it took the queued prompts and closes a
    // turn left open (with this reason); replacing it would do both twice.
    if (live && live !== before && this.#owned.has(live) && live.lastSeq >= length) return live.idle()
    // Current, and no turn left open (a read-only copy loaded mid-turn is current but must be closed).
    if (live && live.status === 'idle' && live.lastSeq === length && !live.turnOpen) return
    // A copy still running here lost the lease earlier: it stops (its writes are refused once
    // another instance wrote), and the load below waits for what it still writes. Gone from the
    // map at once: nobody is handed it meanwhile, nor after a load that fails.
    if (live && live.status !== 'idle') {
      this.#sessions.delete(id)
      this.#abandon(id, live)
    }
    await (this.#loading.get(id) ?? this.#loadOnce(id, { closeOpenTurn: TAKEN_OVER, replace: true })).then((s) =>
      s.idle(),
    )
  }

  /** The lease of a session was lost: the copy here is stale (another instance runs it now). */
  leaseLost(id: string): void {
    const s = this.#sessions.get(id)
    if (!s) return
    this.#sessions.delete(id)
    this.#abandon(id, s)
  }

  /**
   * `s` gave the session up (Session.abandon); it counts as stopping until it is idle. One still
   * running after `staleSettleMs` (a tool that ignores its cancel) is fenced: it writes nothing
   * more, and once the write under way has ended it no longer holds a load back.
   */
  #abandon(id: string, s: Session): void {
    s.abandon(LEASE_LOST_REASON)
    const before = this.#stopping.get(id)
    const ms = this.opts.staleSettleMs ?? STALE_SETTLE_MS
    const stopped: Promise<void> = (async () => {
      await before
      if (await settleWithin(s.idle(), ms, { unref: true })) return
      this.logger.warn(
        `session ${id}: the copy that lost the lease is still running after ${ms} ms: it writes nothing more`,
      )
      s.fence()
      await settleWithin(s.flush(), ms, { unref: true })
    })().finally(() => {
      if (this.#stopping.get(id) === stopped) this.#stopping.delete(id)
    })
    this.#stopping.set(id, stopped)
  }

  /** The live session with this id, if it is in memory. */
  peek(id: string): Session | undefined {
    return this.#sessions.get(id)
  }

  /** True while `delete(id, {purge})` runs: readers answer "not found" (the delete has begun). */
  deleting(id: string): boolean {
    return this.#deleting.has(id)
  }

  /** Live sessions (in memory). */
  live(): Session[] {
    return [...this.#sessions.values()]
  }

  /**
   * The sessions every surface lists (store/listing.ts `listSessions`): persisted ones, a live
   * one by its current summary, live ones that are not persisted, none being deleted; filtered,
   * newest first, one page after `query.cursor`.
   */
  listSessions(query: PageQuery = {}): Promise<SessionPage> {
    return listSessions(this.store, query, {
      summaries: () => this.live().flatMap((s) => (this.#stale(s) ? [] : [s.summary as SessionSummary])),
      hidden: (id) => this.#deleting.has(id),
    })
  }

  /** The first page of {@link listSessions}: at most `filter.limit` rows (absent: all). */
  async list(filter: ListFilter = {}): Promise<SessionSummary[]> {
    return (await this.listSessions(filter)).sessions
  }

  /**
   * A session's summary and events: a live session's current ones, or a persisted one read from
   * the store without making it live (a read neither loads it nor resets its idle clock) —
   * unless prompts it had accepted were never started (the process stopped): then it is loaded,
   * which closes them in the log, so the answer shows every accepted prompt. Throws
   * `session_not_found` for an unknown id or one being deleted.
   */
  async detail(id: string): Promise<SessionDetail> {
    const live = this.#sessions.get(id)
    if (live && (await this.#current(live))) {
      live.touch()
      await live.flush()
      return { session_id: id, summary: live.summary as SessionSummary, events: await live.events() }
    }
    if (!isSessionId(id) || this.#deleting.has(id)) throw sessionNotFound(id)
    const loaded = await this.store.load(id)
    if (!loaded || this.#deleting.has(id)) throw sessionNotFound(id)
    if (loaded.queued.length === 0 || (this.opts.leases && !this.opts.leases.holds(id))) {
      // Read, not served (a load that had to recover the session took its marker): the file
      // store lets it go again, another process may want it. A copy here that another process
      // held is not served either (it is read again before use). With leases the store's
      // release gives up the lease, which is the router's business.
      const copy = this.#sessions.get(id)
      if (!this.shared && (!copy || copy.heldBy) && !this.#loading.has(id)) this.store.release?.(id)
      return { session_id: id, summary: loaded.summary, events: loaded.events }
    }
    const session = await this.get(id)
    await session.idle()
    await session.flush()
    return { session_id: id, summary: session.summary as SessionSummary, events: await session.events() }
  }

  /** Called when a session leaves memory (evicted as idle, or deleted). */
  onEvict(listener: EvictListener): () => void {
    this.#evictListeners.add(listener)
    return () => this.#evictListeners.delete(listener)
  }

  /**
   * Evict sessions untouched for `ttlMs` (≤ 0 or non-finite: none), except those `inUse` says are
   * still followed (open event streams: an instance that only streams a session another instance
   * runs sees none of its turns touch it); returns the evicted.
   */
  evictIdle(ttlMs: number, now = Date.now(), inUse: (id: string) => boolean = () => false): Session[] {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) return []
    const out: Session[] = []
    for (const s of this.#sessions.values()) if (now - s.lastTouched >= ttlMs && !inUse(s.id)) out.push(s)
    for (const s of out) this.#remove(s, 'idle')
    return out
  }

  /**
   * A client is done with `id` (ACP `session/close`): once its turn has ended, the file store
   * lets the session go (its owner marker dropped, so another process may write it). The copy
   * stays in memory as one read without the marker: checked before its next use, and its next
   * write takes the marker again. Nothing to do with a shared store (leases are the router's).
   */
  async letGo(id: string): Promise<void> {
    const s = this.#sessions.get(id)
    if (!s?.persist || this.shared) return
    await s.idle()
    if (this.#sessions.get(id) === s && s.status === 'idle') this.store.release?.(id)
  }

  /** `keepHeld`: a purge, whose store removal drops the marker itself (nobody takes it meanwhile). */
  #remove(s: Session, reason: 'idle' | 'deleted', keepHeld = false): void {
    s.close()
    this.#sessions.delete(s.id)
    for (const l of this.#evictListeners) {
      try {
        l(s, reason)
      } catch (err) {
        this.logger.error('evict listener failed', err)
      }
    }
    // Persisted sessions stay on disk (loadable again); memory ones are gone with the session.
    // Teardown (and the end of a memory session, which cannot come back) wipes the undo history.
    // A persisted session loaded here again meanwhile stays held.
    void s.idle().then(() => {
      if (!s.persist) void this.memory.remove(s.id)
      else if (!keepHeld && !this.#sessions.has(s.id) && !this.#loading.has(s.id)) this.store.release?.(s.id)
    })
    if (reason === 'deleted' || !s.persist) void s.clearFileHistory()
  }

  /**
   * Cancel and forget a session. With `purge`, delete its stored data too — event log and undo
   * history, after its cancelled turn has written its last event — so no listing shows it again;
   * a persisted session that is not in memory (evicted, or from an earlier run) is purged as
   * well. True when it existed (in memory, or, with `purge`, on disk).
   */
  async delete(id: string, opts: { purge?: boolean } = {}): Promise<boolean> {
    if (this.#deleting.has(id)) return false
    // A session another process holds is not deleted from here (read again: it may have let go).
    if (opts.purge && this.#sessions.get(id)?.heldBy) {
      const fresh = await this.get(id).catch(() => undefined)
      if (fresh?.heldBy) throw sessionHeld(id, fresh.heldBy)
    }
    const s = this.#sessions.get(id)
    if (s) this.#remove(s, 'deleted', opts.purge)
    if (!opts.purge) return Boolean(s)
    // From here on the session is unknown to readers (get, list, a reload from disk), while its
    // last events are written and its files removed: no request can bring it back or queue a
    // prompt the delete would then drop.
    this.#deleting.add(id)
    try {
      if (s) {
        await s.idle()
        await s.flush()
        await s.clearFileHistory()
      } else {
        const loaded = isSessionId(id) ? await this.store.load(id).catch(() => undefined) : undefined
        if (!loaded) return false
        if (loaded.heldBy) throw sessionHeld(id, loaded.heldBy)
        if (this.opts.history) await this.opts.history(loaded.meta).clear()
      }
      await (s?.persist === false ? this.memory : this.store).remove(id)
      return true
    } catch (err) {
      // Not removed: the marker it kept for the removal goes.
      if (s?.persist !== false) this.store.release?.(id)
      throw err
    } finally {
      // A load that raced the delete registered nothing (#load checks), but be certain.
      const stray = this.#sessions.get(id)
      if (stray && stray !== s) this.#remove(stray, 'deleted')
      this.#deleting.delete(id)
    }
  }

  /** Cancel every running turn (shutdown: `reason` goes on their `cancelled` events). */
  closeAll(reason?: string): void {
    for (const s of this.#sessions.values()) s.close(reason)
  }

  /**
   * Cancel every turn (`cancelled` says `server shutdown`; accepted prompts that will not run
   * are closed in the log), then wait (at most `ms`) for each to write its last events, then close
   * the store it opened (its open append handles).
   */
  async shutdown(ms = 10_000): Promise<void> {
    this.#shuttingDown = true
    this.closeAll(SHUTDOWN_REASON)
    const all = [...this.#sessions.values()]
    // Copies given up here that are still stopping, and loads under way (they install nothing now).
    const others = [...this.#stopping.values(), ...[...this.#loading.values()].map((p) => p.catch(() => {}))]
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all([
        ...all.map(async (s) => {
          await s.idle()
          await s.flush()
          await s.shutdownLsp()
        }),
        ...others,
      ]),
      new Promise<void>((r) => {
        timer = setTimeout(r, ms)
      }),
    ])
    clearTimeout(timer)
    // The store this manager opened itself (a store passed in is its owner's to close).
    if (this.opts.store === undefined) await this.store.close?.()
  }
}

export const SHUTDOWN_REASON = 'server shutdown'
/** Loads under way a take-over waits for, one after another, before it reads the store itself. */
const MAX_LOAD_WAITS = 8
/** How long a copy that lost its lease may go on stopping before it is fenced (ManagerOptions.staleSettleMs). */
const STALE_SETTLE_MS = 5000
/** The terminal `error` of a turn whose instance stopped mid-turn, written by the instance that took the session over. */
export const TAKEN_OVER =
  'the turn was interrupted: the instance that ran it stopped (its lease ran out) and another instance took the session over'
const LEASE_LOST_REASON = 'this instance lost the session to another instance'

/** `tools` plus the LSP tools (those already in `tools` are kept: a caller's substitutes win). */
function withLspTools(tools: ReadonlyMap<string, Tool>): ReadonlyMap<string, Tool> {
  const out = new Map(tools)
  for (const t of lspTools()) if (!out.has(t.name)) out.set(t.name, t)
  return out
}

/** Allow-list entries: built-in names, or MCP tool names and patterns (core/tool-patterns.ts). */
export function checkToolNames(names: string[]): void {
  const unknown = names.filter((n) => !isKnownTool(n) && !isToolPattern(n))
  if (unknown.length)
    throw new Error(
      `unknown tool(s) ${unknown.join(', ')}; available: ${Object.keys(toolSpecs).join(', ')}, or MCP tools as mcp__<server>__<tool>, mcp__<server>, mcp__*`,
    )
}

/** The real path of `p`, resolving its longest existing prefix (it may not exist yet). */
function realOrSelf(p: string): string {
  const abs = resolve(p)
  const parent = dirname(abs)
  try {
    return realpathSync(abs)
  } catch {
    return parent === abs ? abs : join(realOrSelf(parent), basename(abs))
  }
}
