/**
 * The session manager: many sessions at once, no lock on agent work (each session runs its own
 * turns). The map is the only shared structure. Sessions persist to the file store unless
 * created with `persist: false`, which keeps them in memory.
 */
import { join } from 'node:path'
import type { Logger } from '../log.ts'
import { noopLogger } from '../log.ts'
import { FileEventStore } from '../store/file-store.ts'
import { MemoryEventStore } from '../store/memory-store.ts'
import { chimeraHome, eventlogRoot, isSessionId, newSessionId } from '../store/paths.ts'
import type { AgentPrefix, EventStore, ListFilter, SessionMeta } from '../store/types.ts'
import { builtinTools } from '../tools/registry.ts'
import type { SandboxMode, Tool } from '../tools/types.ts'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import { ModelRegistry } from './models.ts'
import { OFFLINE_MODEL } from '../providers/offline.ts'
import { PermissionAuditLog, resolveRules, type ApprovalPolicy, type Rule } from './permissions.ts'
import { Session, MODES } from './session.ts'
import type { SessionSummary } from '../../generated/schemas.gen.ts'

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
  permissionOverrides?: Record<string, Rule>
  home?: string
  logger?: Logger
  models?: ModelRegistry
  tools?: ReadonlyMap<string, Tool>
  /** Inject a store (tests, other engines); default the file store under CHIMERA_HOME. */
  store?: EventStore
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

export class SessionNotFoundError extends Error {
  override name = 'SessionNotFoundError'
  constructor(id: string) {
    super(`session not found: ${id}`)
  }
}

export class SessionManager {
  readonly opts: ManagerOptions
  readonly models: ModelRegistry
  readonly store: EventStore
  readonly memory = new MemoryEventStore()
  readonly audit: PermissionAuditLog
  readonly tools: ReadonlyMap<string, Tool>
  readonly logger: Logger
  readonly #sessions = new Map<string, Session>()

  constructor(opts: ManagerOptions) {
    this.opts = opts
    const home = opts.home ?? chimeraHome()
    this.logger = opts.logger ?? noopLogger
    this.models = opts.models ?? new ModelRegistry()
    this.store = opts.store ?? new FileEventStore({ root: eventlogRoot(home), logger: this.logger })
    this.audit = new PermissionAuditLog(join(home, 'permissions', 'audit.jsonl'))
    this.tools = opts.tools ?? builtinTools()
    if (opts.allowedTools) checkToolNames(opts.allowedTools)
    this.models.check(opts.model ?? OFFLINE_MODEL)
  }

  get defaultModel(): string {
    return this.opts.model ?? OFFLINE_MODEL
  }

  /** Create a session; validates model, mode and tools before anything is stored. */
  async create(o: CreateOptions = {}): Promise<Session> {
    const model = o.model ?? this.defaultModel
    this.models.check(model)
    const mode = o.mode ?? this.opts.mode ?? 'build'
    if (!(MODES as readonly string[]).includes(mode)) throw new Error(`unknown mode "${mode}"; available: ${MODES.join(', ')}`)
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
    const persist = o.persist ?? true
    const store = persist ? this.store : this.memory
    const session = new Session(meta, this.#deps(store, cwd, persist, o.approval))
    await store.create(meta, session.summary as SessionSummary)
    this.#sessions.set(meta.session_id, session)
    return session
  }

  #deps(store: EventStore, cwd: string, persist: boolean, approval?: ApprovalPolicy) {
    return {
      store,
      models: this.models,
      tools: this.tools,
      rules: resolveRules({ cwd, overrides: this.opts.permissionOverrides }),
      audit: this.audit,
      approval: approval ?? this.opts.approval ?? 'allow',
      sandbox: this.opts.sandbox ?? 'workspace-write',
      logger: this.logger,
      persist,
    }
  }

  /** A live session, or one loaded from disk (its history and counter rebuilt exactly). */
  async get(id: string): Promise<Session> {
    const live = this.#sessions.get(id)
    if (live) return live
    if (!isSessionId(id)) throw new SessionNotFoundError(id)
    const loaded = await this.store.load(id)
    if (!loaded) throw new SessionNotFoundError(id)
    if (loaded.repaired) this.logger.warn(`session ${id}: a torn tail record was dropped on load`)
    const session = Session.restore(loaded.meta, loaded.events, this.#deps(this.store, loaded.meta.cwd, true))
    this.#sessions.set(id, session)
    return session
  }

  /** Live sessions (in memory). */
  live(): Session[] {
    return [...this.#sessions.values()]
  }

  /** Persisted sessions (newest first), with live ones' current state. */
  async list(filter: ListFilter = {}): Promise<SessionSummary[]> {
    const stored = await this.store.list(filter)
    return stored.map((s) => (this.#sessions.get(s.session_id)?.summary as SessionSummary | undefined) ?? s)
  }

  /** Cancel and forget a session; with `purge`, delete its stored data too. */
  async delete(id: string, opts: { purge?: boolean } = {}): Promise<boolean> {
    const s = this.#sessions.get(id)
    if (s) s.close()
    this.#sessions.delete(id)
    if (opts.purge) await (s?.persist === false ? this.memory : this.store).remove(id)
    return Boolean(s)
  }

  /** Cancel every running turn (shutdown). */
  closeAll(): void {
    for (const s of this.#sessions.values()) s.close()
  }
}

export function checkToolNames(names: string[]): void {
  const unknown = names.filter((n) => !(n in toolSpecs))
  if (unknown.length) throw new Error(`unknown tool(s) ${unknown.join(', ')}; available: ${Object.keys(toolSpecs).join(', ')}`)
}
