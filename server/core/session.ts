/**
 * One session: its ordered, durable event stream and the state folded from it (written through
 * one EventWriter), a work queue (a prompt while a turn runs waits its turn, in order; `/undo`
 * and `/redo` take their place in the same queue), steering, cancellation, compaction, model,
 * mode and approval switches, and the pending permission requests any transport may answer.
 * State machine: idle → running → cancelled → idle.
 */
import { randomUUID } from 'node:crypto'
import { realpathSync } from 'node:fs'
import { join } from 'node:path'
import type { ChatMessage, PermissionRequestData, ToolCall, Usage } from '../../generated/schemas.gen.ts'
import { toolSpecs, type ToolName } from '../../generated/tools/tools.gen.ts'
import type { Logger } from '../log.ts'
import type { ToolSchema } from '../providers/types.ts'
import type { EventStore, SessionMeta, StreamOptions } from '../store/types.ts'
import type { SandboxMode, Tool, ToolContext } from '../tools/types.ts'
import { lazyProvider, type LspFactory, type LspProvider } from '../lsp/provider.ts'
import type { AnyEvent, EventData, EventOf, EventType } from '../events/event-types.ts'
import { TurnToken } from './cancel.ts'
import { AUTO_COMPACT_RATIO, currentTurnStart, estimateTokens, summarise } from './compaction.ts'
import { EventLogError, EventWriter } from './event-writer.ts'
import type { FileHistory } from './file-history.ts'
import { FileTracker } from './file-tracker.ts'
import { endTurn, runTurn, type TurnOutcome } from './loop.ts'
import type { ModelRegistry } from './model-registry.ts'
import { isApprovalPolicy, type ApprovalPolicy, type PermissionAuditLog, type PermissionDecision, type Rule } from './permissions.ts'
import { toolAllowed } from './tool-patterns.ts'
import { checkUserMessage, MessageTooLargeError } from './message-limit.ts'
import { parseSlash, rewindReply, type CommandRenderer } from './slash-commands.ts'
import { addUsage, initialState, reduce, zeroUsage, type SessionState } from './state.ts'
import type { PermissionReply, TurnHost } from './turn-host.ts'

export type SessionStatus = 'idle' | 'running' | 'cancelled'
const SUMMARY_POINTS: ReadonlySet<EventType> = new Set(['turn_start', 'agent_result', 'error', 'cancelled', 'model_changed', 'compaction', 'undo', 'redo'])
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
  /** Real paths no tool may touch (CHIMERA_HOME, the snapshot root). */
  protectedPaths: readonly string[]
  /** Bash may run without bubblewrap in the confined modes (explicit opt-in). */
  allowUnconfined: boolean
  /** Extra environment for tool processes (project config). */
  toolEnv: Readonly<Record<string, string>>
  /** File-level undo history (absent: undo rewinds messages only). */
  history?: FileHistory
  /** Custom slash commands (`/name args`). */
  commands?: CommandRenderer
  /** Makes the LSP manager of a working directory (absent: the LSP tools say `LSP not configured`). */
  lsp?: LspFactory
}

/** The result of `/undo` or `/redo`. */
export interface RewindResult {
  turns: number
  files_restored: number
  remaining: number
  files: string[]
  output: string
}

interface Work {
  run(): Promise<void>
  cancelQueued(): void
}

export class Session implements TurnHost {
  readonly meta: SessionMeta
  readonly #deps: SessionDeps
  readonly #state: SessionState
  readonly #writer: EventWriter
  readonly #tracker: FileTracker
  #status: SessionStatus = 'idle'
  #queue: Work[] = []
  #steering: string[] = []
  #token: TurnToken | undefined
  #pending = new Map<string, { resolve: (r: PermissionReply) => void }>()
  /** Usage of the running turn: the sum of its `usage` events (an unpriced step makes its cost null). */
  #turnUsage: Usage = zeroUsage()
  #idleWaiters: (() => void)[] = []
  #pumping = false
  /** False once the running turn has decided to finish: a later steer would be lost. */
  #acceptSteering = false
  #unanswerable: string | undefined
  #closed = false
  /** Tools a transport substitutes for this session (an ACP client's file system or terminal). */
  #toolOverrides: ReadonlyMap<string, Tool> | undefined
  /** Tools beyond the built-ins (an ACP client's MCP servers'), each with its own contract. */
  #extraTools: ReadonlyMap<string, Tool> | undefined
  /** The file history was lined up with the messages (once, before the first queued work). */
  #aligned: boolean
  /** The session's language servers: made on the first LSP tool call, shut down with the session. */
  readonly #lsp: { provider: LspProvider; shutdown(): Promise<void> } | undefined
  lastTouched = Date.now()

  constructor(meta: SessionMeta, deps: SessionDeps, state?: SessionState) {
    this.meta = meta
    this.#deps = deps
    this.#state = state ?? initialState(Session.#init(meta))
    // A new session (a fresh id) has no file history to line up: its first turn starts at once.
    this.#aligned = state === undefined
    this.#writer = new EventWriter({ store: deps.store, state: this.#state, sessionId: meta.session_id, logger: deps.logger, onEvent: (e) => this.#onEvent(e) })
    this.#lsp = deps.lsp ? lazyProvider(deps.lsp, () => this.meta.cwd) : undefined
    this.#tracker = new FileTracker({ cwd: meta.cwd, history: deps.history, emit: (path, diff) => this.#writer.post('file_edit', { path, diff }) })
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
    return { ...this.#state.summary, status: this.#status, created_at: Date.parse(this.meta.created_at) / 1000, last_touched: this.lastTouched / 1000 }
  }
  get models(): ModelRegistry {
    return this.#deps.models
  }
  get tools(): ReadonlyMap<string, Tool> {
    if (!this.#toolOverrides && !this.#extraTools) return this.#deps.tools
    return new Map([...this.#deps.tools, ...(this.#toolOverrides ?? []), ...(this.#extraTools ?? [])])
  }

  /**
   * Substitute tool implementations for this session (same names, same contracts): an ACP
   * client that offers `fs/*` or `terminal/*` gets file tools and Bash that go through it.
   * `undefined` restores the built-ins. Takes effect from the next tool call.
   */
  useTools(overrides: ReadonlyMap<string, Tool> | undefined): void {
    this.#toolOverrides = overrides && overrides.size ? overrides : undefined
  }

  /**
   * Add tools beyond the built-ins for this session (replacing earlier extras; `undefined`
   * removes them): each carries its own contract (description, JSON-schema input, default
   * permission rule, argument check). A name that is a built-in's, or a tool without a
   * contract, is ignored. Permission rules, the approval policy and the allow-list apply as to
   * any tool. Takes effect from the next model call.
   */
  useExtraTools(tools: ReadonlyMap<string, Tool> | undefined): void {
    const kept = [...(tools ?? [])].filter(([name, t]) => t.contract && !Object.hasOwn(toolSpecs, name) && !this.#deps.tools.has(name))
    this.#extraTools = kept.length ? new Map(kept) : undefined
  }

  /** Mark the session as used now (transports call it on every observable activity). */
  touch(): void {
    this.lastTouched = Date.now()
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
    const a = this.#state.approval
    return isApprovalPolicy(a) ? a : this.#deps.approval
  }
  get persist(): boolean {
    return this.#deps.persist
  }
  get closed(): boolean {
    return this.#closed
  }

  /** A copy of the history the model sees. */
  messages(): ChatMessage[] {
    return structuredClone(this.#state.messages)
  }

  availableTools(): ToolSchema[] {
    const allowed = this.meta.allowed_tools
    const out: ToolSchema[] = []
    for (const [name, tool] of this.tools) {
      if (!toolAllowed(name, allowed)) continue
      const s = Object.hasOwn(toolSpecs, name) ? toolSpecs[name as ToolName] : tool.contract
      if (!s || (this.mode === 'plan' && s.permission !== 'allow')) continue
      out.push({ name, description: s.description, input_schema: s.inputSchema as Record<string, unknown> })
    }
    return out
  }

  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>> {
    return this.#writer.emit(type, data)
  }

  emitChunk(type: 'text_delta' | 'reasoning' | 'tool_progress', key: string, data: Record<string, unknown>): Promise<void> {
    return this.#writer.stream(type, key, data)
  }

  #onEvent(e: AnyEvent): void {
    this.lastTouched = Date.now()
    if (e.type === 'usage') this.#turnUsage = addUsage(this.#turnUsage, e.data.usage)
    // Keep the on-disk summary current at the points that change what it says.
    if (SUMMARY_POINTS.has(e.type)) void this.#writeSummary()
  }

  async #writeSummary(): Promise<void> {
    try {
      await this.#deps.store.writeSummary(this.id, this.#state.summary)
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: summary not written`, err)
    }
  }

  toolContext(call: ToolCall, token: TurnToken): ToolContext {
    const w = this.#writer
    return {
      cwd: this.meta.cwd,
      // The read-only approval preset runs every call in the read-only sandbox.
      sandbox: this.approval === 'read-only' ? 'read-only' : this.#deps.sandbox,
      signal: token.signal,
      progress: (chunk) => void w.stream('tool_progress', call.call_id, { call_id: call.call_id, tool: call.tool, ...chunk }),
      sandboxViolation: (v) => w.post('sandbox_violation', v),
      notice: (level, text) => w.post('notice', { level, text }),
      plan: (entries) => w.post('plan', { call_id: call.call_id, entries }),
      fileOpen: (path, line) => w.post('file_open', { path, ...(line !== undefined ? { line } : {}) }),
      protectedPaths: this.#deps.protectedPaths,
      readOnlyPaths: [join(realCwd(this.meta.cwd), '.chimera')],
      allowUnconfined: this.#deps.allowUnconfined,
      toolEnv: this.#deps.toolEnv,
      files: this.#tracker,
      ...(this.#lsp ? { lsp: this.#lsp.provider } : {}),
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

  /** Persisted events after a cursor, then live ones: no gap, no duplicate (EventStore.stream). */
  stream(opts: StreamOptions = {}): AsyncIterable<AnyEvent> {
    return this.#deps.store.stream(this.id, opts)
  }

  /**
   * Queue a prompt; `done` resolves when its turn (or command) ends. A prompt that is exactly
   * `/undo [N | --steps N]` or `/redo …` rewinds or replays turns instead of reaching the model;
   * `/name args` of a custom command runs its rendered template as the turn's message.
   * Throws MessageTooLargeError (nothing queued) when the prompt or its rendering is too large.
   */
  prompt(text: string): { messageId: string; done: Promise<TurnOutcome> } {
    // Over the limit: refused before anything is queued or written (MessageTooLargeError).
    checkUserMessage(text)
    const messageId = `msg-${randomUUID()}`
    this.lastTouched = Date.now()
    const slash = parseSlash(text)
    if (slash?.kind === 'usage') {
      return { messageId, done: this.#enqueue(async () => this.#commandError(slash.message), failedOutcome('the session was closed')) }
    }
    if (slash?.kind === 'undo' || slash?.kind === 'redo') {
      const kind = slash.kind
      const done = this.#enqueue(async (): Promise<TurnOutcome> => {
        const r = await this.#rewind(kind, slash.steps)
        return { stop_reason: 'end_turn', success: r.turns > 0, output: r.output }
      }, failedOutcome('the session was closed'))
      return { messageId, done }
    }
    let command: { name: string; arguments: string } | undefined
    let message = text
    if (slash?.kind === 'custom' && this.#deps.commands) {
      try {
        const rendered = this.#deps.commands.render(slash.name, slash.arguments)
        if (rendered !== undefined) {
          command = { name: slash.name, arguments: slash.arguments }
          message = rendered
        }
      } catch (err) {
        if (MessageTooLargeError.is(err)) throw err
        const why = `/${slash.name}: ${err instanceof Error ? err.message : String(err)}`
        return { messageId, done: this.#enqueue(async () => this.#commandError(why), failedOutcome('the session was closed')) }
      }
    }
    return { messageId, done: this.#enqueue(() => this.#turn(message, messageId, command), failedOutcome('')) }
  }

  /**
   * Queue the rendered template of a custom command as a turn (the invoke route, which renders
   * it first): the text goes to the model as is, never parsed as a slash command, and the user
   * message records the command.
   */
  promptCommand(rendered: string, command: { name: string; arguments: string }): { messageId: string; done: Promise<TurnOutcome> } {
    checkUserMessage(rendered, 'the rendered command')
    checkUserMessage(command.arguments, "the command's arguments")
    const messageId = `msg-${randomUUID()}`
    this.lastTouched = Date.now()
    return { messageId, done: this.#enqueue(() => this.#turn(rendered, messageId, command), failedOutcome('')) }
  }

  /** `/undo` as an operation (transports' undo endpoints): rewinds up to `steps` turns. */
  undo(steps = 1): Promise<RewindResult> {
    return this.#enqueue(() => this.#rewind('undo', steps), undefined)
  }

  redo(steps = 1): Promise<RewindResult> {
    return this.#enqueue(() => this.#rewind('redo', steps), undefined)
  }

  /** Queue work behind the running turn; `onClose` answers it if the session closes first. */
  #enqueue<T>(fn: () => Promise<T>, onClose: T | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#closed) return onClose === undefined ? reject(new SessionClosedError(this.id)) : resolve(onClose)
      this.#queue.push({
        run: async () => {
          try {
            resolve(await fn())
          } catch (err) {
            reject(err)
          }
        },
        cancelQueued: () => (onClose === undefined ? reject(new SessionClosedError(this.id)) : resolve(onClose)),
      })
      if (!this.#pumping) void this.#pump()
    })
  }

  async #pump(): Promise<void> {
    this.#pumping = true
    if (!this.#aligned) {
      this.#aligned = true
      if (this.#deps.history?.align) {
        // Work is queued: the session is busy from now on, also while the history lines up.
        this.#status = 'running'
        await this.#alignHistory()
      }
    }
    while (this.#queue.length) {
      const next = this.#queue.shift()!
      await next.run()
    }
    if (this.#status === 'running') this.#status = 'idle' // work closed before it ran
    this.#pumping = false
    for (const w of this.#idleWaiters.splice(0)) w()
  }

  async #turn(prompt: string, messageId: string, command?: { name: string; arguments: string }): Promise<TurnOutcome> {
    const token = new TurnToken()
    this.#token = token
    this.#status = 'running'
    this.#acceptSteering = true
    this.#turnUsage = zeroUsage()
    let outcome: TurnOutcome
    try {
      await this.#closeInterruptedTurn()
      outcome = await runTurn(this, token, prompt, messageId, command)
    } catch (err) {
      // Only a failing event store gets here; the turn cannot be recorded.
      this.#deps.logger.error(`session ${this.id}: turn aborted`, err)
      const message = err instanceof Error ? err.message : String(err)
      outcome = { stop_reason: 'error', success: false, output: message, source: err instanceof EventLogError ? 'store' : 'internal' }
    }
    this.#acceptSteering = false
    this.#steering = []
    this.#token = undefined
    await this.#writer.settled()
    await this.#commitFiles()
    await this.#writeSummary()
    // Idle only when nothing is queued: a prompt sent while this turn was finishing runs next.
    if (this.#queue.length === 0) this.#status = 'idle'
    else this.#status = 'running'
    return outcome
  }

  /** A turn the process did not finish (it stopped mid-turn): close it before the next one. */
  async #closeInterruptedTurn(): Promise<void> {
    if (!this.#state.inTurn) return
    for (const [callId, tool] of this.#state.openCalls) {
      await this.emit('tool_result', { call_id: callId, tool, ok: false, error: 'interrupted: the process stopped before this call finished', duration_ms: 0 })
    }
    await endTurn(this, { stop_reason: 'error', success: false, output: 'the turn was interrupted: the process stopped before it finished', source: 'internal' }, 0)
  }

  async #alignHistory(): Promise<void> {
    try {
      await this.#deps.history?.align?.({ undoable: this.#state.turnStarts.length, redoable: this.#state.redo.length, turns: this.#state.turns })
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: undo history not aligned`, err)
    }
  }

  /** Remove the session's file-level undo history (teardown), after any running work. */
  async clearFileHistory(): Promise<void> {
    await this.idle()
    try {
      await this.#deps.history?.clear()
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: undo history not cleared`, err)
    }
  }

  async #commitFiles(): Promise<void> {
    const changed = this.#tracker.takeChanged()
    try {
      await this.#deps.history?.commitTurn(changed)
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: undo snapshot not recorded`, err)
    }
  }

  async #commandError(message: string): Promise<TurnOutcome> {
    await this.emit('error', { message, source: 'command' })
    await this.#writeSummary()
    return { stop_reason: 'error', success: false, output: message, source: 'internal' }
  }

  async #rewind(kind: 'undo' | 'redo', steps: number): Promise<RewindResult> {
    this.#status = 'running'
    try {
      const history = this.#deps.history
      const counts = history ? await history.counts() : undefined
      const messageSide = kind === 'undo' ? this.#state.turnStarts.length : this.#state.redo.length
      const fileSide = counts ? (kind === 'undo' ? counts.undoable : counts.redoable) : messageSide
      const n = Math.max(0, Math.min(steps, messageSide, fileSide))
      let files: string[] = []
      if (n > 0 && history) {
        try {
          files = (await history[kind](n)).files
        } catch (err) {
          // The files could not be moved: the messages stay where they are too.
          const message = `/${kind}: the files could not be ${kind === 'undo' ? 'rewound' : 'replayed'}: ${err instanceof Error ? err.message : String(err)}`
          this.#deps.logger.error(`session ${this.id}: ${message}`)
          await this.emit('error', { message, source: 'command' })
          await this.#writeSummary()
          return { turns: 0, files_restored: 0, remaining: Math.min(messageSide, fileSide), files: [], output: message }
        }
      }
      const remaining = Math.max(0, Math.min(messageSide, fileSide) - n)
      const output = rewindReply(kind, n, files.length, remaining)
      await this.emit(kind, { turns: n, files_restored: files.length, remaining, files, output })
      // Settles the summary write the event started (the store runs them in order).
      await this.#writeSummary()
      return { turns: n, files_restored: files.length, remaining, files, output }
    } finally {
      this.#status = this.#queue.length ? 'running' : 'idle'
    }
  }

  /** How many turns can be undone and redone now. */
  async rewindCounts(): Promise<{ undoable: number; redoable: number }> {
    const c = (await this.#deps.history?.counts()) ?? { undoable: Infinity, redoable: Infinity }
    return { undoable: Math.min(c.undoable, this.#state.turnStarts.length), redoable: Math.min(c.redoable, this.#state.redo.length) }
  }

  /** Resolves when no turn is running or queued. */
  idle(): Promise<void> {
    if (!this.#pumping && this.#queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /** Inject a message into the running turn before its next model call; false when idle. Throws MessageTooLargeError. */
  steer(text: string): boolean {
    checkUserMessage(text)
    if (this.#status !== 'running' || !this.#acceptSteering) return false
    this.lastTouched = Date.now()
    this.#steering.push(text)
    return true
  }

  takeSteering(): string[] {
    return this.#steering.splice(0)
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
    this.lastTouched = Date.now()
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

  unanswerable(): string | undefined {
    return this.#unanswerable
  }

  /**
   * No client can answer permission requests any more (its input ended): pending requests are
   * denied and later ones refused, with `reason` in the tool error.
   */
  stopAsking(reason: string, source: string): void {
    this.#unanswerable = reason
    for (const id of [...this.#pending.keys()]) this.replyPermission(id, 'deny', source)
  }

  /** Pending permission requests (for clients that attach late). */
  pendingPermissions(): string[] {
    return [...this.#pending.keys()]
  }

  /** The pending requests with their data, from the log (for clients that attach late). */
  async pendingPermissionRequests(): Promise<PermissionRequestData[]> {
    const ids = new Set(this.#pending.keys())
    if (ids.size === 0) return []
    const events = await this.events(Math.max(0, this.lastSeq - 2000))
    return events.filter((e): e is EventOf<'permission_request'> => e.type === 'permission_request' && ids.has(e.data.request_id)).map((e) => e.data)
  }

  /** Answer a pending permission request from any transport; false when it is not pending. */
  replyPermission(requestId: string, decision: PermissionDecision, source: string): boolean {
    const p = this.#pending.get(requestId)
    if (!p) return false
    this.lastTouched = Date.now()
    this.#pending.delete(requestId)
    p.resolve({ decision, source })
    return true
  }

  turnUsage(): Usage {
    return { ...this.#turnUsage }
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

  /** Cancel any running turn, drop queued work, release waiters (teardown). */
  close(): void {
    this.#closed = true
    this.cancel()
    for (const q of this.#queue.splice(0)) q.cancelQueued()
    void this.shutdownLsp()
  }

  /** Stop the session's language servers (idempotent; the session starts no more). */
  async shutdownLsp(): Promise<void> {
    try {
      await this.#lsp?.shutdown()
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: language servers did not shut down cleanly`, err)
    }
  }

  /** Resolves when every event written so far has settled (persisted or failed). */
  flush(): Promise<void> {
    return this.#writer.settled()
  }
}

function failedOutcome(output: string): TurnOutcome {
  return { stop_reason: 'cancelled', success: false, output }
}

function realCwd(cwd: string): string {
  try {
    return realpathSync(cwd)
  } catch {
    return cwd
  }
}

export class SessionBusyError extends Error {
  override name = 'SessionBusyError'
}

export class SessionClosedError extends Error {
  override name = 'SessionClosedError'
  constructor(id: string) {
    super(`session ${id} was closed`)
  }
}
