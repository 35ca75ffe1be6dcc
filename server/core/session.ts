/**
 * One session: its ordered, durable event stream and the state folded from it (written through
 * one EventWriter), a work queue (a prompt while a turn runs waits its turn, in order; `/undo`
 * and `/redo` take their place in the same queue), steering, cancellation, compaction, model,
 * mode and approval switches, and the pending permission requests any transport may answer.
 * State machine: idle → running → cancelled → idle.
 *
 * Its jobs live beside it: the queue driving and the status (session-queue.ts, over
 * work-queue.ts), the accepted prompts and what is owed to the log (prompt-ledger.ts), undo/redo (session-rewind.ts), the permission requests
 * (permission-broker.ts), the settings (session-settings.ts), the tools (session-tools.ts),
 * steering (steering.ts) and the routing of slash commands (slash-commands.ts `routePrompt`).
 */
import { setImmediate as nextMacrotask } from 'node:timers/promises'
import { randomUUID } from '../platform/random.ts'
import type { ChatMessage, PermissionRequestData, ToolCall, Usage } from '../../generated/schemas.gen.ts'
import type { Logger } from '../log.ts'
import type { ToolSchema } from '../providers/types.ts'
import type { QueuedPrompt, SessionMeta, StoredRecordPage, StreamOptions } from '../store/types.ts'
import { sessionHeld, type SessionHolder } from '../store/session-owner.ts'
import type { SandboxMode, Tool, ToolContext } from '../tools/types.ts'
import { lazyProvider, type LspProvider } from '../lsp/provider.ts'
import { TERMINAL_EVENTS, type AnyEvent, type EventData, type EventOf, type EventType } from '../events/event-types.ts'
import { ChimeraError } from '../errors.ts'
import { TurnToken } from './cancel.ts'
import { EventLogError, EventWriter } from './event-writer.ts'
import { FileTracker } from './file-tracker.ts'
import { runTurn, type TurnOutcome } from './loop.ts'
import type { ModelRegistry } from './model-registry.ts'
import {
  isApprovalPolicy,
  type ApprovalPolicy,
  type PermissionAuditLog,
  type PermissionDecision,
  type Rule,
} from './permissions.ts'
import { checkUserMessage } from './message-limit.ts'
import { routePrompt } from './slash-commands.ts'
import { addUsage, initialState, reduce, zeroUsage, type SessionState } from './state.ts'
import type { PermissionReply, TurnHost } from './turn-host.ts'
import { PermissionBroker } from './permission-broker.ts'
import { PromptLedger } from './prompt-ledger.ts'
import { alignHistory, clearHistory, commitFiles, rewind, rewindCounts } from './session-rewind.ts'
import * as settings from './session-settings.ts'
import { SessionQueue } from './session-queue.ts'
import { SessionTools } from './session-tools.ts'
import { Steering, type SteerMessage } from './steering.ts'
import { SummaryWriter } from './summary-writer.ts'
import {
  errorText,
  type Command,
  type RewindResult,
  type SessionCore,
  type SessionDeps,
  type SessionStatus,
  type Submitted,
} from './session-types.ts'

export type { RewindResult, SessionDeps, SessionStatus, Submitted } from './session-types.ts'
export { MODES, normalizeTitle, TITLE_MAX, type Mode } from './session-settings.ts'

/**
 * The events after which `summary.json` is rewritten at once: what changes the listing besides a
 * turn's end. A turn's summary (its prompt, result and counts together) is written shortly after
 * it ends (summary-writer.ts).
 */
const SUMMARY_POINTS: ReadonlySet<EventType> = new Set([
  'model_changed',
  'compaction',
  'undo',
  'redo',
  'session_renamed',
])

export class Session implements TurnHost {
  readonly meta: SessionMeta
  readonly #deps: SessionDeps
  readonly #state: SessionState
  readonly #writer: EventWriter
  readonly #tracker: FileTracker
  /** What the session's helpers share with it. */
  readonly #core: SessionCore
  readonly #queue: SessionQueue
  readonly #ledger: PromptLedger
  readonly #permissions = new PermissionBroker()
  readonly #tools: SessionTools
  readonly #steering = new Steering()
  #token: TurnToken | undefined
  /** Usage of the running turn: the sum of its `usage` events (an unpriced step makes its cost null). */
  #turnUsage: Usage = zeroUsage()
  /** The file history was lined up with the messages (once, before the first queued work). */
  #aligned: boolean
  /** The message id of the last `user_message` in the log (a turn whose prompt got there is an undo step). */
  #lastPrompt: string | undefined
  /** The session's language servers: made on the first LSP tool call, shut down with the session. */
  readonly #lsp: { provider: LspProvider; shutdown(): Promise<void> } | undefined
  lastTouched = Date.now()
  /** When `summary.json` is written (at once, or shortly after a turn's end). */
  readonly #summary: SummaryWriter
  #heldBy: SessionHolder | undefined
  /**
   * The last turn's saving (its undo snapshot; its summary is written apart), which runs after the turn is reported:
   * the next work, `idle()`, `flush()` and a prompt's `done` wait for it.
   */
  #saving: Promise<void> = Promise.resolve()
  /** Why this copy gave the session up (its lease went to another instance): it starts no turn from then on. */
  #abandoned: string | undefined

  constructor(meta: SessionMeta, deps: SessionDeps, state?: SessionState) {
    this.meta = meta
    this.#deps = deps
    this.#state = state ?? initialState(Session.#init(meta))
    // A new session (a fresh id) has no file history to line up: its first turn starts at once.
    this.#aligned = state === undefined
    this.#summary = new SummaryWriter({
      ...(deps.summaryDelayMs !== undefined ? { delayMs: deps.summaryDelayMs } : {}),
      seq: () => this.#state.lastSeq,
      write: () => this.#deps.store.writeSummary(this.id, this.#state.summary),
      failed: (err) => this.#deps.logger.error(`session ${this.id}: summary not written`, err),
    })
    this.#writer = new EventWriter({
      store: deps.store,
      state: this.#state,
      sessionId: meta.session_id,
      logger: deps.logger,
      onEvent: (e) => this.#onEvent(e),
    })
    this.#core = {
      get id() {
        return meta.session_id
      },
      deps,
      state: this.#state,
      emit: (type, data) => this.#writer.emit(type, data),
      writeSummary: () => this.#summary.now(),
      saved: () => this.#saving,
      abandoned: () => this.#abandoned !== undefined,
    }
    this.#ledger = new PromptLedger(this.#core, this)
    this.#queue = new SessionQueue({
      id: meta.session_id,
      ledger: this.#ledger,
      logger: deps.logger,
      before: () => this.#beforeFirstWork(),
      ready: () => this.#aligned || !this.#deps.history?.align,
    })
    this.#tools = new SessionTools(deps.tools)
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
    opts: { closeOpenTurn?: string; heldBy?: SessionHolder } = {},
  ): Session {
    const state = initialState(Session.#init(meta))
    for (const e of events) reduce(state, e)
    state.open = undefined
    const session = new Session(meta, deps, state)
    session.#heldBy = opts.heldBy
    // A turn another instance left open (it stopped mid-turn): closed at once, first in the
    // queue, with this reason on its terminal `error` (docs/scale-out.md "Failures").
    if (opts.closeOpenTurn !== undefined && (state.inTurn || state.terminalOwed)) {
      session.#ledger.interrupted({ message: opts.closeOpenTurn, source: 'internal' })
      if (!queued.length) session.#queue.recover([], [])
    }
    if (queued.length) {
      const logged = new Set(events.flatMap(loggedMessageId))
      session.#queue.recover(
        queued.filter((q) => !logged.has(q.message_id)),
        queued.filter((q) => logged.has(q.message_id)),
      )
    }
    return session
  }

  get id(): string {
    return this.meta.session_id
  }
  get status(): SessionStatus {
    return this.#queue.status
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
  /** True while the log has a turn without its end (running here, or left open by a process that stopped). */
  get turnOpen(): boolean {
    return this.#state.inTurn || this.#state.terminalOwed
  }
  get summary() {
    return {
      ...this.#state.summary,
      status: this.#queue.status,
      created_at: Date.parse(this.meta.created_at) / 1000,
      last_touched: this.lastTouched / 1000,
    }
  }
  get models(): ModelRegistry {
    return this.#deps.models
  }
  get tools(): ReadonlyMap<string, Tool> {
    return this.#tools.all
  }

  /**
   * Substitute tool implementations for this session (same names, same contracts): an ACP
   * client that offers `fs/*` or `terminal/*` gets file tools and Bash that go through it.
   * `undefined` restores the built-ins. Takes effect from the next tool call.
   */
  useTools(overrides: ReadonlyMap<string, Tool> | undefined): void {
    this.#tools.override(overrides)
  }

  /**
   * Like `useTools`, unless another client's substitutes are in place (a network client beside
   * the editor that runs the session): true when `overrides` took effect.
   */
  useToolsIfFree(overrides: ReadonlyMap<string, Tool>): boolean {
    if (this.#tools.overridden) return false
    this.#tools.override(overrides)
    return true
  }

  /** Give back substitutes taken with `useTools`: the built-ins return unless another client's took their place. */
  releaseTools(overrides: ReadonlyMap<string, Tool>): void {
    this.#tools.restore(overrides)
  }

  /**
   * Add tools beyond the built-ins for this session (replacing earlier extras; `undefined`
   * removes them): each carries its own contract (description, JSON-schema input, default
   * permission rule, argument check). A name that is a built-in's, or a tool without a
   * contract, is ignored. Permission rules, the approval policy and the allow-list apply as to
   * any tool. Takes effect from the next model call.
   */
  useExtraTools(tools: ReadonlyMap<string, Tool> | undefined): void {
    this.#tools.extra(tools)
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
    return this.#queue.closed
  }

  /** A copy of the history the model sees. */
  messages(): ChatMessage[] {
    // Only the open assistant message still changes as events arrive (core/state.ts), so only it
    // is copied; the others are shared and must not be changed (no whole-history copy per call).
    const open = this.#state.open
    return this.#state.messages.map((m) => (m === open ? structuredClone(m) : m))
  }

  availableTools(): ToolSchema[] {
    return this.#tools.available(this.meta.allowed_tools, this.mode)
  }

  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>> {
    return this.#writer.emit(type, data)
  }

  record<T extends EventType>(type: T, data: EventData<T>): void {
    this.#writer.record(type, data)
    // Counted when recorded: the turn's result is built before its usage events are on disk
    // (if one cannot be written, the turn fails and no result carries the sum).
    if (type === 'usage') this.#turnUsage = addUsage(this.#turnUsage, (data as EventData<'usage'>).usage)
  }

  barrier(): Promise<void> {
    return this.#writer.barrier()
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
    const logged = loggedMessageId(e)[0]
    if (logged !== undefined) this.#ledger.logged(logged)
    if (e.type === 'user_message') this.#lastPrompt = e.data.message_id
    // Keep the on-disk summary current at the points that change what it says.
    if (SUMMARY_POINTS.has(e.type)) void this.#summary.now()
    else if (TERMINAL_EVENTS.has(e.type)) this.#summary.turnEnded(e.seq)
  }

  toolContext(call: ToolCall, token: TurnToken): ToolContext {
    return this.#tools.context({
      call,
      token,
      writer: this.#writer,
      cwd: this.meta.cwd,
      // The read-only approval preset runs every call in the read-only sandbox.
      sandbox: this.approval === 'read-only' ? 'read-only' : this.#deps.sandbox,
      deps: this.#deps,
      files: this.#tracker,
      lsp: this.#lsp?.provider,
    })
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
   * A page of the stored records after `afterSeq` (none after `upTo`) as the store holds them, for
   * a replay that sends them as they are; undefined when the store cannot (then `stream`).
   */
  storedPage(afterSeq: number, upTo: number): Promise<StoredRecordPage | undefined> {
    // Nothing stored to send before the live part (a stream of a new session): no store call,
    // which would wait in the session's store queue behind the writes in flight.
    if (afterSeq >= upTo) return Promise.resolve(undefined)
    return this.#deps.store.readStored?.(this.id, afterSeq, upTo) ?? Promise.resolve(undefined)
  }

  /**
   * Queue a prompt; `done` resolves when its turn (or command) ends. A prompt that is exactly
   * `/undo [N | --steps N]` or `/redo …` rewinds or replays turns instead of reaching the model;
   * `/name args` of a custom command runs its rendered template as the turn's message.
   * Throws `message_too_large` (nothing queued) when the prompt or its rendering is too large.
   * `messageId`: the id its `user_message` records (a prompt forwarded from another instance
   * brings the one its client knows).
   */
  prompt(text: string, messageId = `msg-${randomUUID()}`): Submitted {
    this.#writable()
    // Over the limit: refused before anything is queued or written (`message_too_large`).
    checkUserMessage(text)
    this.lastTouched = Date.now()
    const route = routePrompt(text, this.#deps.commands)
    if (route.kind === 'error')
      return this.#queue.submit(messageId, text, undefined, async () => this.#commandError(route.message))
    if (route.kind !== 'turn') {
      const kind = route.kind
      return this.#queue.submit(messageId, text, undefined, async (): Promise<TurnOutcome> => {
        const r = await this.#rewind(kind, route.steps)
        return { stop_reason: 'end_turn', success: r.turns > 0, output: r.output }
      })
    }
    const { message, command } = route
    return this.#saved(
      this.#queue.submit(messageId, message, command, () => this.#turn(message, messageId, command), true),
    )
  }

  /**
   * A turn's `done` after its saving too (its summary is due: `flush()` writes it now); `ended` as
   * soon as its terminal event is on disk.
   */
  #saved(s: Submitted): Submitted {
    return {
      ...s,
      ended: s.done,
      done: s.done.then(async (outcome) => {
        await this.#saving
        return outcome
      }),
    }
  }

  /**
   * Queue the rendered template of a custom command as a turn (the invoke route, which renders
   * it first): the text goes to the model as is, never parsed as a slash command, and the user
   * message records the command.
   */
  promptCommand(rendered: string, command: Command): Submitted {
    this.#writable()
    checkUserMessage(rendered, 'the rendered command')
    checkUserMessage(command.arguments, "the command's arguments")
    const messageId = `msg-${randomUUID()}`
    this.lastTouched = Date.now()
    return this.#saved(
      this.#queue.submit(messageId, rendered, command, () => this.#turn(rendered, messageId, command), true),
    )
  }

  /** `/undo` as an operation (transports' undo endpoints): rewinds up to `steps` turns. */
  undo(steps = 1): Promise<RewindResult> {
    return this.#writes(() => this.#queue.enqueue(() => this.#rewind('undo', steps), undefined))
  }

  redo(steps = 1): Promise<RewindResult> {
    return this.#writes(() => this.#queue.enqueue(() => this.#rewind('redo', steps), undefined))
  }

  /**
   * Another live process holds this session (the file store's owner marker, store/session-owner.ts):
   * this copy was read as it is and only reads; every change is refused with `session_busy`
   * naming that process. The manager reads such a copy again before each use.
   */
  get heldBy(): SessionHolder | undefined {
    return this.#heldBy
  }

  /** Refuse a change to a session another process holds (see {@link heldBy}). */
  #writable(): void {
    if (this.#heldBy) throw sessionHeld(this.id, this.#heldBy)
  }

  /** `change()`, or its refusal as a rejected promise. */
  #writes<T>(change: () => Promise<T>): Promise<T> {
    if (this.#heldBy) return Promise.reject(sessionHeld(this.id, this.#heldBy))
    return change()
  }

  #rewind(kind: 'undo' | 'redo', steps: number): Promise<RewindResult> {
    return this.#queue.withStatus(async () => {
      await this.#saving
      return rewind(this.#core, kind, steps)
    })
  }

  /** Before the queue's first work: line the file history up with the messages (once). */
  #beforeFirstWork(): Promise<void> | undefined {
    if (this.#aligned) return undefined
    this.#aligned = true
    if (!this.#deps.history?.align) return undefined
    // Work is queued: the session is busy from now on, also while the history lines up.
    this.#queue.status = 'running'
    return alignHistory(this.#core)
  }

  async #turn(prompt: string, messageId: string, command?: Command): Promise<TurnOutcome> {
    const token = new TurnToken()
    this.#token = token
    this.#queue.status = 'running'
    this.#steering.start()
    this.#turnUsage = zeroUsage()
    // The previous turn's undo snapshot is on disk before this one writes anything: a crash leaves
    // at most one turn without its snapshot (the one `align` commits on the next open).
    await this.#saving
    // Given up before it wrote anything: it runs and writes nothing. A queued prompt's entry stays
    // in the log for the instance that runs the session now; a direct one was never accepted.
    if (this.#abandoned !== undefined) {
      this.#steering.end()
      this.#token = undefined
      this.#queue.status = this.#queue.length === 0 ? 'idle' : 'running'
      return { stop_reason: 'cancelled', success: false, output: `not run here: ${this.#abandoned}` }
    }
    let outcome: TurnOutcome
    try {
      outcome = await runTurn(this, token, prompt, messageId, command)
    } catch (err) {
      // Only a failing event store gets here; the turn cannot be recorded.
      this.#deps.logger.error(`session ${this.id}: turn aborted`, err)
      // A prompt accepted by its user_message that never got there is refused with the store's error.
      this.#ledger.dropDirect(messageId, err)
      const message = errorText(err)
      const source = err instanceof EventLogError ? 'store' : 'internal'
      outcome = { stop_reason: 'error', success: false, output: message, source }
      // Closed before the next work with this reason, not as if the process had stopped.
      if (this.#state.inTurn || this.#state.terminalOwed)
        this.#ledger.interrupted({ message: `the turn was interrupted: ${message}`, source })
    }
    // Steers the turn never took (it was cancelled or failed) were acknowledged: each is closed
    // before the next work like a prompt that never ran, never dropped without a trace.
    for (const m of this.#steering.end())
      void m.written.then((ok) => {
        // A copy that gave the session up leaves its queue entry to the one that runs it now.
        if (!ok || this.#abandoned !== undefined) return
        this.#ledger.owe(m.entry, STEER_NOT_TAKEN)
        this.#queue.recover([], []) // written as the next work
      })
    this.#token = undefined
    await this.#writer.settled()
    // The turn is over and its terminal event on disk: it is reported now (`ended`), while its
    // undo snapshot is written (docs/decisions/0475-turn-reported-before-saving.md); its summary
    // shortly after (its terminal event made it due: summary-writer.ts).
    // An undo step per turn in the messages: a turn whose user_message never reached the log is
    // none (it changed nothing; if it was acknowledged, its closing record commits one later).
    const changed = this.#tracker.takeChanged()
    const commit = this.#lastPrompt === messageId || changed.length > 0
    // The undo snapshot begins a macrotask later, after the answer due in this one has gone out;
    // `#saving` holds it from now on, so `idle()`, the next turn and a close wait for it.
    this.#saving = commit ? nextMacrotask().then(() => commitFiles(this.#core, changed)) : Promise.resolve()
    // Idle only when nothing is queued: a prompt sent while this turn was finishing runs next.
    if (this.#queue.length === 0) this.#queue.status = 'idle'
    else this.#queue.status = 'running'
    return outcome
  }

  /** Remove the session's file-level undo history (teardown), after any running work. */
  async clearFileHistory(): Promise<void> {
    await this.idle()
    await clearHistory(this.#core)
  }

  async #commandError(message: string): Promise<TurnOutcome> {
    await this.emit('error', { message, source: 'command' })
    await this.#summary.now()
    return { stop_reason: 'error', success: false, output: message, source: 'internal' }
  }

  /** How many turns can be undone and redone now. */
  rewindCounts(): Promise<{ undoable: number; redoable: number }> {
    return rewindCounts(this.#core)
  }

  /**
   * Resolves when no turn is running or queued, and the last one's saving is done, its summary too
   * (written at once if due), for every caller.
   */
  async idle(): Promise<void> {
    await this.#queue.idle()
    await this.#saving
    await this.#summary.settled()
  }

  /**
   * Resolves when the summary covering the last turn's end is written (at once if it was due): a
   * turn's end told to a client after this is in the listing of every instance.
   */
  summarySettled(): Promise<void> {
    return this.#summary.settled()
  }

  /**
   * When the running turn already wrote its terminal event and nothing is queued behind it, it is
   * only saving (its undo snapshot, its summary): wait for that, so a client that saw the turn end — on
   * any instance's stream — does not find the session still running. A turn already reported
   * (the session idle again) may still be saving its snapshot: that is waited for too. Returns at once otherwise.
   */
  async settleFinishedTurn(): Promise<void> {
    if (this.status !== 'running') return this.#saving
    if (this.#queue.length > 0) return
    const [last] = await this.events(Math.max(0, this.lastSeq - 1))
    if (last && TERMINAL_EVENTS.has(last.type)) await this.idle()
  }

  /**
   * Send a message to the running turn, before its next model call: false (nothing recorded)
   * when no turn is running or it has decided to finish. Resolves true once the message's queue
   * entry is on disk (an acknowledged steer survives a crash: the next open closes it like a
   * prompt that never ran); rejects like {@link prompt}'s `accepted` when the store refuses it.
   */
  async steer(text: string): Promise<boolean> {
    this.#writable()
    checkUserMessage(text)
    if (this.#queue.status !== 'running' || !this.#steering.open) return false
    this.lastTouched = Date.now()
    const entry = this.#ledger.entry(`msg-${randomUUID()}`, text, undefined, true)
    const accepted = this.#ledger.accept(entry)
    // Held by the turn at once (it must not finish), taken only once written.
    this.#steering.push({
      id: entry.message_id,
      text,
      entry,
      written: accepted.then(
        () => true,
        () => false,
      ),
    })
    await accepted
    return true
  }

  takeSteering(): Promise<SteerMessage[]> {
    return this.#steering.take()
  }

  /**
   * Called when the model has finished: true (and steering closes for this turn) when the turn
   * may end; false when a steering message is waiting, so the turn must make another call.
   */
  finishTurn(): boolean {
    return this.#steering.finish()
  }

  /**
   * Cancel the running turn (queued prompts still run); false when nothing was running. `reason`
   * (a server shutdown) is recorded on the `cancelled` event; without one it is the client's cancel.
   */
  cancel(reason?: string): boolean {
    this.lastTouched = Date.now()
    if (this.#queue.status !== 'running' || !this.#token || this.#token.cancelled) return false
    this.#queue.status = 'cancelled'
    this.#token.cancel(reason)
    this.#permissions.cancelAll()
    return true
  }

  waitForPermission(requestId: string): Promise<PermissionReply> {
    return this.#permissions.wait(requestId)
  }

  unanswerable(): string | undefined {
    return this.#permissions.unanswerable
  }

  /**
   * No client can answer permission requests any more (its input ended): pending requests are
   * denied and later ones refused, with `reason` in the tool error.
   */
  stopAsking(reason: string, source: string): void {
    this.#permissions.refuse(reason)
    for (const id of this.#permissions.ids()) this.replyPermission(id, 'deny', source)
  }

  /** Pending permission requests (for clients that attach late). */
  pendingPermissions(): string[] {
    return this.#permissions.ids()
  }

  /** The pending requests with their data, from the log (for clients that attach late). */
  pendingPermissionRequests(): Promise<PermissionRequestData[]> {
    return this.#permissions.requests((after) => this.events(after), this.lastSeq)
  }

  /** Answer a pending permission request from any transport; false when it is not pending. */
  replyPermission(requestId: string, decision: PermissionDecision, source: string): boolean {
    if (!this.#permissions.reply(requestId, decision, source)) return false
    this.lastTouched = Date.now()
    return true
  }

  turnUsage(): Usage {
    return { ...this.#turnUsage }
  }

  /** Summarise the history into one message (an event records it). Only while idle. */
  compact(): Promise<EventOf<'compaction'>> {
    return this.#writes(() => settings.compact(this.#core, this.#queue.status))
  }

  autoCompact(): Promise<void> {
    return settings.autoCompact(this.#core)
  }

  setModel(model: string): Promise<void> {
    return this.#writes(() => settings.setModel(this.#core, model))
  }

  setMode(mode: string): Promise<void> {
    return this.#writes(() => settings.setMode(this.#core, mode))
  }

  setApproval(policy: ApprovalPolicy): Promise<void> {
    return this.#writes(() => settings.setApproval(this.#core, this.approval, policy))
  }

  /** Set or clear the title (session-settings.ts `rename`). */
  rename(title: string | null): Promise<void> {
    return this.#writes(() => settings.rename(this.#core, title))
  }

  /**
   * Cancel any running turn (with `reason`, e.g. a server shutdown), drop queued work, release
   * waiters (teardown). Accepted prompts that will not run are closed in the log, in order, after
   * the running turn's last events: `user_message` and a turn ending in `error` ("not run: …").
   */
  close(reason?: string): void {
    // Once: a second close (shutdown reaches a session from more than one transport) must not
    // drop the work that closes the accepted prompts.
    if (!this.#queue.close()) return void this.cancel(reason)
    this.cancel(reason)
    this.#queue.dropQueued(reason)
    // A summary due is written now: the session is going (from here on, at once).
    this.#summary.close()
    void this.shutdownLsp()
  }

  /**
   * This copy no longer holds the session (its lease went to another instance, or a fresh load
   * replaces it): it writes no more summaries, so a late one cannot cover the new owner's.
   */
  drop(): void {
    this.#summary.drop()
  }

  /**
   * This copy lost the session to another instance (its lease), which takes the accepted prompts
   * from the log (and closes them as not run): the running turn is cancelled with `reason`, a turn
   * that has not written anything yet runs nothing, queued work is answered here as not run
   * without closing it in the log, a prompt sent now is refused as not recorded, permission
   * requests are refused, and no summary is written (see {@link drop}). `idle()` resolves once the
   * running turn has stopped; the manager fences a copy that does not (see {@link fence}).
   */
  abandon(reason: string): void {
    if (this.#abandoned !== undefined) return
    this.#abandoned = reason
    this.#queue.close(reason)
    this.cancel(reason)
    this.#queue.abandonQueued()
    this.#permissions.refuse(reason)
    this.drop()
    // Its language servers are its own (the copy that runs the session now starts its own).
    void this.idle().then(() => this.shutdownLsp())
  }

  /**
   * A copy given up that is still running past the time allowed (a tool that ignores its cancel):
   * it writes nothing more; `flush()` then ends with the write under way.
   */
  fence(): void {
    this.#writer.fence(
      new ChimeraError(
        'store_unavailable',
        `session ${this.id}: ${this.#abandoned ?? 'this copy gave the session up'}`,
      ),
    )
  }

  /** Stop the session's language servers (idempotent; the session starts no more). */
  async shutdownLsp(): Promise<void> {
    try {
      await this.#lsp?.shutdown()
    } catch (err) {
      this.#deps.logger.error(`session ${this.id}: language servers did not shut down cleanly`, err)
    }
  }

  /**
   * Resolves when every event written so far has settled (persisted or failed), and the summary
   * writes they started (a due one begun now): `#onEvent` starts them without waiting, so a delete
   * or a shutdown that follows finds nothing still writing in the session's directory.
   */
  async flush(): Promise<void> {
    await this.#writer.settled()
    await this.#saving
    await this.#summary.flush()
  }
}

const STEER_NOT_TAKEN = 'not run: the turn ended before this steering message reached the model'

/** The queue entry an event retires: a prompt's `user_message`, a steer's `steering` event. */
function loggedMessageId(e: AnyEvent): string[] {
  if (e.type === 'user_message') return [e.data.message_id]
  if (e.type === 'steering' && e.data.message_id !== undefined) return [e.data.message_id]
  return []
}
