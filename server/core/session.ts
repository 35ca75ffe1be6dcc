/**
 * One session: its ordered, durable event stream and the state folded from it, a turn queue
 * (a prompt while a turn runs waits its turn, in order), steering, cancellation, compaction,
 * model and mode switches, and the pending permission requests any transport may answer.
 * State machine: idle → running → cancelled → idle.
 */
import { randomUUID } from 'node:crypto'
import type { ChatMessage, PermissionRequestData, Usage } from '../../generated/schemas.gen.ts'
import type { Logger } from '../log.ts'
import type { ToolSchema } from '../providers/types.ts'
import type { EventStore, SessionMeta } from '../store/types.ts'
import type { SandboxMode, Tool } from '../tools/types.ts'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import { checkEventData, type AnyEvent, type EventData, type EventOf, type EventType } from './events.ts'
import { TurnToken } from './cancel.ts'
import { AUTO_COMPACT_RATIO, currentTurnStart, estimateTokens, summarise } from './compaction.ts'
import { runTurn, type TurnOutcome } from './loop.ts'
import type { ModelRegistry } from './models.ts'
import type { ApprovalPolicy, PermissionAuditLog, PermissionDecision, Rule } from './permissions.ts'
import { initialState, reduce, type SessionState } from './state.ts'
import type { PermissionReply, TurnHost } from './turn-host.ts'

export type SessionStatus = 'idle' | 'running' | 'cancelled'
const SUMMARY_POINTS: ReadonlySet<EventType> = new Set(['turn_start', 'agent_result', 'error', 'cancelled', 'model_changed', 'compaction'])
export const MODES = ['build', 'plan'] as const
export type Mode = (typeof MODES)[number]

export interface SessionDeps {
  store: EventStore
  models: ModelRegistry
  tools: ReadonlyMap<string, Tool>
  rules: ReadonlyMap<string, Rule>
  audit: PermissionAuditLog
  approval: ApprovalPolicy
  sandbox: SandboxMode
  logger: Logger
  persist: boolean
}

interface Queued {
  prompt: string
  messageId: string
  resolve: (o: TurnOutcome) => void
}

export class Session implements TurnHost {
  readonly meta: SessionMeta
  readonly #deps: SessionDeps
  readonly #state: SessionState
  #status: SessionStatus = 'idle'
  #queue: Queued[] = []
  #steering: string[] = []
  #token: TurnToken | undefined
  #pending = new Map<string, { resolve: (r: PermissionReply) => void; request?: PermissionRequestData }>()
  #turnUsageStart: Usage | undefined
  #idleWaiters: (() => void)[] = []
  /** True while a pump is draining the queue (a second must not start). */
  #pumping = false
  /** False once the running turn has decided to finish: a later steer would be lost. */
  #acceptSteering = false
  lastTouched = Date.now()

  constructor(meta: SessionMeta, deps: SessionDeps, state?: SessionState) {
    this.meta = meta
    this.#deps = deps
    this.#state = state ?? initialState(Session.#init(meta))
  }

  static #init(meta: SessionMeta) {
    return { session_id: meta.session_id, model: meta.model, mode: meta.mode, created_at: meta.created_at, working_dir: meta.cwd, approval: meta.approval }
  }

  /** Rebuild a session from stored events (the same reducer as live). */
  static restore(meta: SessionMeta, events: AnyEvent[], deps: SessionDeps): Session {
    const state = initialState(Session.#init(meta))
    for (const e of events) reduce(state, e)
    state.open = undefined
    return new Session(meta, deps, state)
  }

  get id(): string {
    return this.meta.session_id
  }
  get status(): SessionStatus {
    return this.#status
  }
  get model(): string {
    return this.#state.model
  }
  get mode(): string {
    return this.#state.mode
  }
  get lastSeq(): number {
    return this.#state.lastSeq
  }
  get summary() {
    return { ...this.#state.summary, status: this.#status, last_touched: this.lastTouched / 1000 }
  }
  get models(): ModelRegistry {
    return this.#deps.models
  }
  get tools(): ReadonlyMap<string, Tool> {
    return this.#deps.tools
  }
  get sandbox(): SandboxMode {
    return this.#deps.sandbox
  }
  get logger(): Logger {
    return this.#deps.logger
  }
  get rules(): ReadonlyMap<string, Rule> {
    return this.#deps.rules
  }
  get audit(): PermissionAuditLog {
    return this.#deps.audit
  }
  get approval(): ApprovalPolicy {
    return (this.#state.approval as ApprovalPolicy | undefined) ?? this.#deps.approval
  }
  get persist(): boolean {
    return this.#deps.persist
  }

  /** A copy of the history the model sees. */
  messages(): ChatMessage[] {
    return this.#state.messages.map((m) => ({ ...m, ...(m.tool_calls ? { tool_calls: [...m.tool_calls] } : {}) }))
  }

  availableTools(): ToolSchema[] {
    const allowed = this.meta.allowed_tools
    return [...this.#deps.tools.keys()]
      .filter((name) => name in toolSpecs && (!allowed || allowed.includes(name)))
      .filter((name) => this.mode !== 'plan' || toolSpecs[name as keyof typeof toolSpecs].permission === 'allow')
      .map((name) => {
        const s = toolSpecs[name as keyof typeof toolSpecs]
        return { name, description: s.description, input_schema: s.inputSchema as Record<string, unknown> }
      })
  }

  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>> {
    const event = {
      seq: this.#state.lastSeq + 1,
      id: `evt-${randomUUID()}`,
      session_id: this.id,
      type,
      // A turn's user_message and turn_start open turn N (= turns so far); later events belong to it.
      turn: type === 'user_message' || type === 'turn_start' ? this.#state.turns : Math.max(0, this.#state.turns - 1),
      ts: new Date().toISOString(),
      data: checkEventData(type, data),
    } as EventOf<T>
    reduce(this.#state, event as AnyEvent)
    this.lastTouched = Date.now()
    const persisted = this.#deps.store.append(event as AnyEvent)
    // Keep the on-disk summary current at the points that change what it says.
    if (SUMMARY_POINTS.has(type)) void persisted.then(() => this.#writeSummary())
    return persisted.then(() => event)
  }

  async #writeSummary(): Promise<void> {
    try {
      await this.#deps.store.writeSummary(this.id, this.#state.summary)
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: summary not written`, err)
    }
  }

  /** Events with a counter above `afterSeq`, from the store. */
  events(afterSeq = 0): Promise<AnyEvent[]> {
    return this.#deps.store.read(this.id, afterSeq)
  }

  /** Listen to events as they are persisted; returns an unsubscribe function. */
  subscribe(listener: (e: AnyEvent) => void): () => void {
    return this.#deps.store.subscribe(this.id, listener)
  }

  /** Queue a prompt; `done` resolves when its turn ends. */
  prompt(text: string): { messageId: string; done: Promise<TurnOutcome> } {
    const messageId = `msg-${randomUUID()}`
    const done = new Promise<TurnOutcome>((resolve) => this.#queue.push({ prompt: text, messageId, resolve }))
    this.lastTouched = Date.now()
    if (!this.#pumping) void this.#pump()
    return { messageId, done }
  }

  async #pump(): Promise<void> {
    this.#pumping = true
    while (this.#queue.length) {
      const next = this.#queue.shift()!
      const token = new TurnToken()
      this.#token = token
      this.#status = 'running'
      this.#acceptSteering = true
      this.#turnUsageStart = { ...(this.#state.summary.usage ?? { input_tokens: 0, output_tokens: 0 }) }
      let outcome: TurnOutcome
      try {
        outcome = await runTurn(this, token, next.prompt, next.messageId)
      } catch (err) {
        // Only a failing event store gets here; the turn cannot be recorded.
        this.#deps.logger.error(`session ${this.id}: turn aborted`, err)
        outcome = { stop_reason: 'error', success: false, output: err instanceof Error ? err.message : String(err), source: 'internal' }
      }
      this.#acceptSteering = false
      this.#steering = []
      this.#token = undefined
      await this.#writeSummary()
      // Idle only when nothing is queued: a prompt sent while this turn was finishing runs next.
      if (this.#queue.length === 0) this.#status = 'idle'
      next.resolve(outcome)
    }
    this.#pumping = false
    for (const w of this.#idleWaiters.splice(0)) w()
  }

  /** Resolves when no turn is running or queued. */
  idle(): Promise<void> {
    if (!this.#pumping && this.#queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /** Inject a message into the running turn before its next model call; false when idle. */
  steer(text: string): boolean {
    if (this.#status !== 'running' || !this.#acceptSteering) return false
    this.#steering.push(text)
    return true
  }

  takeSteering(): string[] {
    return this.#steering.splice(0)
  }

  hasSteering(): boolean {
    return this.#steering.length > 0
  }

  /**
   * Called when the model has finished: true (and steering closes for this turn) when the turn
   * may end; false when a steering message is waiting, so the turn must make another call.
   */
  finishTurn(): boolean {
    if (this.#steering.length > 0) return false
    this.#acceptSteering = false
    return true
  }

  /** Cancel the running turn (queued prompts still run); false when nothing was running. */
  cancel(): boolean {
    if (this.#status !== 'running' || !this.#token || this.#token.cancelled) return false
    this.#status = 'cancelled'
    this.#token.cancel()
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id)
      p.resolve({ decision: 'cancelled', source: 'cancel' })
    }
    return true
  }

  waitForPermission(requestId: string): Promise<PermissionReply> {
    return new Promise((resolve) => this.#pending.set(requestId, { resolve }))
  }

  /** Pending permission requests (for clients that attach late). */
  pendingPermissions(): string[] {
    return [...this.#pending.keys()]
  }

  /** Answer a pending permission request from any transport; false when it is not pending. */
  replyPermission(requestId: string, decision: PermissionDecision, source: string): boolean {
    const p = this.#pending.get(requestId)
    if (!p) return false
    this.#pending.delete(requestId)
    p.resolve({ decision, source })
    return true
  }

  turnUsage(): Usage {
    const now = this.#state.summary.usage ?? { input_tokens: 0, output_tokens: 0 }
    const start = this.#turnUsageStart ?? { input_tokens: 0, output_tokens: 0 }
    return {
      input_tokens: now.input_tokens - start.input_tokens,
      output_tokens: now.output_tokens - start.output_tokens,
      total_tokens: now.input_tokens - start.input_tokens + now.output_tokens - start.output_tokens,
      cost_usd: (now.cost_usd ?? 0) - (start.cost_usd ?? 0),
    }
  }

  /** Summarise the history into one message (an event records it). Only while idle. */
  async compact(): Promise<EventOf<'compaction'>> {
    if (this.#status !== 'idle') throw new SessionBusyError('cannot compact while a turn is running')
    const before = this.#state.messages
    const summary = summarise(before)
    return this.emit('compaction', { summary, messages_before: before.length, messages_after: 1 })
  }

  async autoCompact(): Promise<void> {
    const provider = this.#deps.models.providerFor(this.model)
    if (!provider) return
    const messages = this.#state.messages
    if (estimateTokens(messages) <= provider.contextWindow(this.model) * AUTO_COMPACT_RATIO) return
    const start = currentTurnStart(messages)
    if (start <= 0) return // nothing before the current turn to summarise
    const kept = messages.length - start
    await this.emit('compaction', { summary: summarise(messages.slice(0, start)), messages_before: messages.length, messages_after: kept + 1 })
  }

  async setModel(model: string): Promise<void> {
    this.#deps.models.check(model)
    if (model === this.model) return
    await this.emit('model_changed', { old: this.model, new: model })
  }

  async setMode(mode: string): Promise<void> {
    if (!(MODES as readonly string[]).includes(mode)) throw new Error(`unknown mode "${mode}"; available: ${MODES.join(', ')}`)
    if (mode === this.mode) return
    await this.emit('mode_changed', { old: this.mode, new: mode })
  }

  async setApproval(policy: ApprovalPolicy): Promise<void> {
    const old = this.approval
    if (policy === old) return
    await this.emit('approval_changed', { old, new: policy })
  }

  /** Cancel any running turn, drop queued prompts, release waiters (teardown). */
  close(): void {
    this.cancel()
    for (const q of this.#queue.splice(0)) q.resolve({ stop_reason: 'cancelled', success: false, output: '' })
  }
}

export class SessionBusyError extends Error {
  override name = 'SessionBusyError'
}
