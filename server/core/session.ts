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
import type { EventStore, QueuedPrompt, SessionMeta, StreamOptions } from '../store/types.ts'
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
import {
  isApprovalPolicy,
  type ApprovalPolicy,
  type PermissionAuditLog,
  type PermissionDecision,
  type Rule,
} from './permissions.ts'
import { toolAllowed } from './tool-patterns.ts'
import { checkUserMessage } from './message-limit.ts'
import { checkMode } from './modes.ts'
import { ChimeraError } from '../errors.ts'
import { parseSlash, rewindReply, type CommandRenderer } from './slash-commands.ts'
import { addUsage, initialState, reduce, zeroUsage, type SessionState } from './state.ts'
import type { PermissionReply, TurnHost } from './turn-host.ts'
import { TURN_ENDING_EVENTS } from '../../generated/event-facts.gen.ts'

export type SessionStatus = 'idle' | 'running' | 'cancelled'
const SUMMARY_POINTS: ReadonlySet<EventType> = new Set([
  'turn_start',
  ...TURN_ENDING_EVENTS,
  'model_changed',
  'compaction',
  'undo',
  'redo',
  'session_renamed',
])
/** The longest title a session may have (specs/schemas/common.yaml SessionSummary.title). */
export const TITLE_MAX = 200
/** A title as kept: whitespace runs (newlines too) become one space, trimmed; blank is `null` (no title). */
export const normalizeTitle = (title: string | null | undefined): string | null =>
  title?.replace(/\s+/g, ' ').trim() || null
export { MODES, type Mode } from './modes.ts'

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
  /** An accepted prompt: its queue entry and the write that recorded it. */
  prompt?: { entry: QueuedPrompt; accepted: Promise<void> }
}

/**
 * A queued prompt: `accepted` resolves once it is on disk; it rejects with `prompt_not_recorded`
 * (the event log refused it: nothing was queued), or `session_not_found` (the session's files
 * went away under the write: it was deleted).
 */
export interface Submitted {
  messageId: string
  done: Promise<TurnOutcome>
  accepted: Promise<void>
}

type Command = { name: string; arguments: string }

const NOT_STARTED_CRASH = "not run: the process stopped before this prompt's turn started"
const INTERRUPTED_CRASH = 'the turn was interrupted: the process stopped before it finished'

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
  /** Queue entries on disk whose `user_message` (or closing record) is not in the log yet. */
  readonly #queuedIds = new Set<string>()
  /** Accepted prompts owed a closing record (their turn could not be recorded); written before the next work. */
  #owed: { entry: QueuedPrompt; why: string }[] = []
  /** Why the open turn stopped, when this process knows (a store that refused its writes). */
  #interruption: { message: string; source: 'store' | 'internal' } | undefined
  #order = 0
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
    this.#writer = new EventWriter({
      store: deps.store,
      state: this.#state,
      sessionId: meta.session_id,
      logger: deps.logger,
      onEvent: (e) => this.#onEvent(e),
    })
    this.#lsp = deps.lsp ? lazyProvider(deps.lsp, () => this.meta.cwd) : undefined
    this.#tracker = new FileTracker({
      cwd: meta.cwd,
      history: deps.history,
      emit: (path, diff) => this.#writer.post('file_edit', { path, diff }),
    })
  }

  static #init(meta: SessionMeta) {
    return {
      session_id: meta.session_id,
      model: meta.model,
      mode: meta.mode,
      created_at: meta.created_at,
      working_dir: meta.cwd,
      approval: meta.approval,
    }
  }

  /**
   * Rebuild a session from stored events (the same reducer as live). Prompts that were accepted
   * and never started (`queued`, left by a process that stopped) are closed at once, in order,
   * each with its `user_message` and a turn that ends in an `error` saying the process stopped
   * (after the interrupted turn, if any, is closed the same way); entries whose `user_message` is
   * already in the log are just removed.
   */
  static restore(
    meta: SessionMeta,
    events: AnyEvent[],
    deps: SessionDeps,
    queued: readonly QueuedPrompt[] = [],
  ): Session {
    const state = initialState(Session.#init(meta))
    for (const e of events) reduce(state, e)
    state.open = undefined
    const session = new Session(meta, deps, state)
    if (queued.length) {
      const logged = new Set(events.flatMap((e) => (e.type === 'user_message' ? [e.data.message_id] : [])))
      session.#recover(
        queued.filter((q) => !logged.has(q.message_id)),
        queued.filter((q) => logged.has(q.message_id)),
      )
    }
    return session
  }

  #recover(pending: QueuedPrompt[], stale: QueuedPrompt[]): void {
    for (const q of pending) this.#queuedIds.add(q.message_id)
    this.#owed.push(...pending.map((entry) => ({ entry, why: NOT_STARTED_CRASH })))
    this.#queue.push({ run: () => this.#settleNow(stale), cancelQueued: () => {} })
    void this.#pump()
  }

  /** Retire `stale` entries and write what is owed; a store that still refuses is logged (tried again before the next work). */
  async #settleNow(stale: readonly QueuedPrompt[] = []): Promise<void> {
    for (const q of stale) await this.#unqueue(q.message_id)
    try {
      await this.#withStatus(() => this.#settleDebts())
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: accepted prompts not closed yet`, err)
    }
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
    return {
      ...this.#state.summary,
      status: this.#status,
      created_at: Date.parse(this.meta.created_at) / 1000,
      last_touched: this.lastTouched / 1000,
    }
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
    const kept = [...(tools ?? [])].filter(
      ([name, t]) => t.contract && !Object.hasOwn(toolSpecs, name) && !this.#deps.tools.has(name),
    )
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

  emitChunk(
    type: 'text_delta' | 'reasoning' | 'tool_progress',
    key: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    return this.#writer.stream(type, key, data)
  }

  #onEvent(e: AnyEvent): void {
    this.lastTouched = Date.now()
    // The prompt is in the log now: its queue entry has done its job.
    if (e.type === 'user_message' && this.#queuedIds.has(e.data.message_id)) void this.#unqueue(e.data.message_id)
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
      progress: (chunk) =>
        void w.stream('tool_progress', call.call_id, { call_id: call.call_id, tool: call.tool, ...chunk }),
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
   * Throws `message_too_large` (nothing queued) when the prompt or its rendering is too large.
   */
  prompt(text: string): Submitted {
    // Over the limit: refused before anything is queued or written (`message_too_large`).
    checkUserMessage(text)
    const messageId = `msg-${randomUUID()}`
    this.lastTouched = Date.now()
    const slash = parseSlash(text)
    if (slash?.kind === 'usage')
      return this.#submit(messageId, text, undefined, async () => this.#commandError(slash.message))
    if (slash?.kind === 'undo' || slash?.kind === 'redo') {
      const kind = slash.kind
      return this.#submit(messageId, text, undefined, async (): Promise<TurnOutcome> => {
        const r = await this.#rewind(kind, slash.steps)
        return { stop_reason: 'end_turn', success: r.turns > 0, output: r.output }
      })
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
        if (ChimeraError.is(err, 'message_too_large')) throw err
        const why = `/${slash.name}: ${err instanceof Error ? err.message : String(err)}`
        return this.#submit(messageId, text, undefined, async () => this.#commandError(why))
      }
    }
    return this.#submit(messageId, message, command, () => this.#turn(message, messageId, command), true)
  }

  /**
   * Queue the rendered template of a custom command as a turn (the invoke route, which renders
   * it first): the text goes to the model as is, never parsed as a slash command, and the user
   * message records the command.
   */
  promptCommand(rendered: string, command: { name: string; arguments: string }): Submitted {
    checkUserMessage(rendered, 'the rendered command')
    checkUserMessage(command.arguments, "the command's arguments")
    const messageId = `msg-${randomUUID()}`
    this.lastTouched = Date.now()
    return this.#submit(messageId, rendered, command, () => this.#turn(rendered, messageId, command), true)
  }

  /**
   * Accept a prompt: its queue entry goes to the store now (`accepted` resolves once it is on
   * disk) and its work joins the queue in call order. A prompt the store refused fails at once
   * (`accepted` rejects with `prompt_not_recorded`, `done` resolves with a `store` error) and
   * runs nothing. `turn`: the work writes the prompt's `user_message`, which retires the entry;
   * other work (slash commands) retires it when it has recorded its result.
   */
  #submit(
    messageId: string,
    text: string,
    command: Command | undefined,
    fn: () => Promise<TurnOutcome>,
    turn = false,
  ): Submitted {
    if (this.#closed)
      return {
        messageId,
        done: Promise.resolve(failedOutcome(turn ? '' : 'the session was closed')),
        accepted: Promise.resolve(),
      }
    const entry: QueuedPrompt = {
      message_id: messageId,
      text,
      ...(command ? { command } : {}),
      accepted_at: Date.now(),
      order: this.#order++,
    }
    this.#queuedIds.add(messageId)
    const accepted = this.#deps.store.queuePrompt(this.id, entry).catch((err: unknown) => {
      this.#queuedIds.delete(messageId)
      if (ChimeraError.is(err, 'session_not_found')) throw err
      const why = err instanceof Error ? err.message : String(err)
      throw new ChimeraError('prompt_not_recorded', `event log write failed (prompt not recorded): ${why}`, {
        cause: err,
      })
    })
    accepted.catch(() => {}) // callers that only follow `done` see the failure there
    const run = async (): Promise<TurnOutcome> => {
      try {
        await accepted
      } catch (err) {
        return storeFailure(err)
      }
      try {
        await this.#settleDebts()
      } catch (err) {
        // The store still refuses writes: this prompt is owed its record too.
        this.#owed.push({ entry, why: `not run: ${errorText(err)}` })
        return storeFailure(err)
      }
      let outcome: TurnOutcome
      try {
        outcome = await fn()
      } catch (err) {
        if (this.#queuedIds.has(messageId)) this.#owed.push({ entry, why: `not run: ${errorText(err)}` })
        throw err
      }
      if (!this.#queuedIds.has(messageId)) return outcome
      if (turn)
        this.#owed.push({ entry, why: `not run: ${outcome.output}` }) // its user_message never reached the log
      else await this.#unqueue(messageId)
      return outcome
    }
    const done = this.#enqueue(run, failedOutcome(turn ? '' : 'the session was closed'), { entry, accepted })
    // Busy from acceptance: the turn starts once its entry is on disk.
    this.#status = 'running'
    // A prompt that could not be recorded fails now, not when its place in the queue comes.
    return {
      messageId,
      done: accepted.then(
        () => done,
        (err: unknown) => storeFailure(err),
      ),
      accepted,
    }
  }

  async #unqueue(messageId: string): Promise<void> {
    this.#queuedIds.delete(messageId)
    try {
      await this.#deps.store.unqueuePrompt(this.id, messageId)
    } catch (err) {
      // Harmless: on the next open an entry whose user_message is in the log is just removed.
      this.#deps.logger.warn(`session ${this.id}: queue entry ${messageId} not removed`, err)
    }
  }

  /** Close what is owed before new work: the interrupted turn, then accepted prompts that never ran. */
  async #settleDebts(): Promise<void> {
    await this.#closeInterruptedTurn()
    while (this.#owed.length) {
      const { entry, why } = this.#owed[0]!
      await this.#closePrompt(entry, why)
      this.#owed.shift()
    }
  }

  /** An accepted prompt that will not run: its user_message, and a turn that ends with `why`. */
  async #closePrompt(p: QueuedPrompt, why: string): Promise<void> {
    await this.emit('user_message', {
      message_id: p.message_id,
      text: p.text,
      ...(p.command ? { command: p.command } : {}),
    })
    await this.emit('turn_start', { prompt: p.text, model: this.model })
    await endTurn(this, { stop_reason: 'error', success: false, output: why, source: 'internal' }, 0)
    await this.#unqueue(p.message_id)
  }

  async #withStatus<T>(fn: () => Promise<T>): Promise<T> {
    this.#status = 'running'
    try {
      return await fn()
    } finally {
      this.#status = this.#queue.length ? 'running' : 'idle'
    }
  }

  /** `/undo` as an operation (transports' undo endpoints): rewinds up to `steps` turns. */
  undo(steps = 1): Promise<RewindResult> {
    return this.#enqueue(() => this.#rewind('undo', steps), undefined)
  }

  redo(steps = 1): Promise<RewindResult> {
    return this.#enqueue(() => this.#rewind('redo', steps), undefined)
  }

  /** Queue work behind the running turn; `onClose` answers it if the session closes first. */
  #enqueue<T>(fn: () => Promise<T>, onClose: T | undefined, prompt?: Work['prompt']): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#closed)
        return onClose === undefined
          ? reject(new ChimeraError('session_closed', `session ${this.id} was closed`))
          : resolve(onClose)
      this.#queue.push({
        run: async () => {
          try {
            resolve(await fn())
          } catch (err) {
            reject(err)
          }
        },
        cancelQueued: () =>
          onClose === undefined
            ? reject(new ChimeraError('session_closed', `session ${this.id} was closed`))
            : resolve(onClose),
        ...(prompt ? { prompt } : {}),
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
      outcome = await runTurn(this, token, prompt, messageId, command)
    } catch (err) {
      // Only a failing event store gets here; the turn cannot be recorded.
      this.#deps.logger.error(`session ${this.id}: turn aborted`, err)
      const message = errorText(err)
      const source = err instanceof EventLogError ? 'store' : 'internal'
      outcome = { stop_reason: 'error', success: false, output: message, source }
      // Closed before the next work with this reason, not as if the process had stopped.
      if (this.#state.inTurn) this.#interruption = { message: `the turn was interrupted: ${message}`, source }
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
    const why = this.#interruption ?? { message: INTERRUPTED_CRASH, source: 'internal' as const }
    const callError = `interrupted: ${this.#interruption ? why.message : 'the process stopped before this call finished'}`
    for (const [callId, tool] of this.#state.openCalls) {
      await this.emit('tool_result', { call_id: callId, tool, ok: false, error: callError, duration_ms: 0 })
    }
    await endTurn(this, { stop_reason: 'error', success: false, output: why.message, source: why.source }, 0)
    this.#interruption = undefined
  }

  async #alignHistory(): Promise<void> {
    try {
      await this.#deps.history?.align?.({
        undoable: this.#state.turnStarts.length,
        redoable: this.#state.redo.length,
        turns: this.#state.turns,
      })
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
    return {
      undoable: Math.min(c.undoable, this.#state.turnStarts.length),
      redoable: Math.min(c.redoable, this.#state.redo.length),
    }
  }

  /** Resolves when no turn is running or queued. */
  idle(): Promise<void> {
    if (!this.#pumping && this.#queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /** Inject a message into the running turn before its next model call; false when idle. Throws `message_too_large`. */
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

  /**
   * Cancel the running turn (queued prompts still run); false when nothing was running. `reason`
   * (a server shutdown) is recorded on the `cancelled` event; without one it is the client's cancel.
   */
  cancel(reason?: string): boolean {
    this.lastTouched = Date.now()
    if (this.#status !== 'running' || !this.#token || this.#token.cancelled) return false
    this.#status = 'cancelled'
    this.#token.cancel(reason)
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
    return events
      .filter((e): e is EventOf<'permission_request'> => e.type === 'permission_request' && ids.has(e.data.request_id))
      .map((e) => e.data)
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
    if (this.#status !== 'idle') throw new ChimeraError('session_busy', 'cannot compact while a turn is running')
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
    await this.emit('compaction', {
      summary: summarise(messages.slice(0, start)),
      messages_before: messages.length,
      messages_after: kept + 1,
    })
  }

  async setModel(model: string): Promise<void> {
    this.#deps.models.check(model)
    if (model === this.model) return
    await this.emit('model_changed', { old: this.model, new: model })
  }

  async setMode(mode: string): Promise<void> {
    checkMode(mode)
    if (mode === this.mode) return
    await this.emit('mode_changed', { old: this.mode, new: mode })
  }

  async setApproval(policy: ApprovalPolicy): Promise<void> {
    const old = this.approval
    if (policy === old) return
    await this.emit('approval_changed', { old, new: policy })
  }

  /**
   * Set (or, with `null` or a blank string, clear) the session's title: `normalizeTitle`d, at most
   * `TITLE_MAX` characters (longer is an `Error` naming the limit). Recorded as a
   * `session_renamed` event (durable before it resolves); the summary on disk is rewritten with
   * it. Setting the title it already has records nothing.
   */
  async rename(title: string | null): Promise<void> {
    const next = normalizeTitle(title)
    if (next !== null && next.length > TITLE_MAX)
      throw new RangeError(`title: at most ${TITLE_MAX} characters (got ${next.length})`)
    if (next === (this.#state.summary.title ?? null)) return
    await this.emit('session_renamed', { title: next })
    await this.#writeSummary()
  }

  /**
   * Cancel any running turn (with `reason`, e.g. a server shutdown), drop queued work, release
   * waiters (teardown). Accepted prompts that will not run are closed in the log, in order, after
   * the running turn's last events: `user_message` and a turn ending in `error` ("not run: …").
   */
  close(reason?: string): void {
    // Once: a second close (shutdown reaches a session from more than one transport) must not
    // drop the work that closes the accepted prompts.
    if (this.#closed) return void this.cancel(reason)
    this.#closed = true
    this.cancel(reason)
    const dropped = this.#queue.splice(0)
    for (const q of dropped) q.cancelQueued()
    const prompts = dropped.flatMap((q) => (q.prompt ? [q.prompt] : []))
    if (prompts.length || this.#owed.length) {
      const why = `not run: ${reason ?? 'the session was closed'} before this prompt's turn started`
      this.#queue.push({
        run: async () => {
          for (const p of prompts) {
            const recorded = await p.accepted.then(
              () => true,
              () => false,
            )
            if (recorded) this.#owed.push({ entry: p.entry, why })
          }
          await this.#settleNow()
        },
        cancelQueued: () => {},
      })
      if (!this.#pumping) void this.#pump()
    }
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

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err))

function storeFailure(err: unknown): TurnOutcome {
  return { stop_reason: 'error', success: false, output: errorText(err), source: 'store' }
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
