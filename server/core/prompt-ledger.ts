/**
 * The accepted prompts of a session, as the store keeps them: every prompt is recorded (its
 * queue entry) before it is queued, and retired once its `user_message` (or its closing record)
 * is in the log. A prompt that starts at once (nothing running, queued or owed) needs no queue
 * entry: its turn writes its `user_message` first, and that record is its acceptance
 * (docs/decisions/0405-direct-prompt-acceptance.md). A prompt that will not run — the process
 * stopped, the session closed, the store refused a write — is owed a closing record: its
 * `user_message` and a turn ending in `error`, written in order before the next work (after the
 * interrupted turn, if any, is closed).
 */
import type { QueuedPrompt } from '../store/types.ts'
import { endTurn, type TurnOutcome } from './loop.ts'
import { commitFiles } from './session-rewind.ts'
import { EventLogError } from './event-writer.ts'
import { ChimeraError } from '../errors.ts'
import { errorText, type Command, type SessionCore } from './session-types.ts'
import type { TurnHost } from './turn-host.ts'

export const NOT_STARTED_CRASH = "not run: the process stopped before this prompt's turn started"
const STEER_CRASH = 'not run: the process stopped before this steering message reached the model'
const INTERRUPTED_CRASH = 'the turn was interrupted: the process stopped before it finished'

export function storeFailure(err: unknown): TurnOutcome {
  return { stop_reason: 'error', success: false, output: errorText(err), source: 'store' }
}

export class PromptLedger {
  readonly #core: SessionCore
  readonly #host: TurnHost
  /** Queue entries on disk whose `user_message` (or closing record) is not in the log yet. */
  readonly #queuedIds = new Set<string>()
  /** Accepted prompts owed a closing record (their turn could not be recorded); written before the next work. */
  #owed: { entry: QueuedPrompt; why: string }[] = []
  /** Why the open turn stopped, when this process knows (a store that refused its writes). */
  #interruption: { message: string; source: 'store' | 'internal' } | undefined
  #order = 0
  /** Prompts accepted directly (no queue entry), waiting for their `user_message` to reach the log. */
  readonly #direct = new Map<string, { resolve(): void; reject(err: unknown): void }>()

  constructor(core: SessionCore, host: TurnHost) {
    this.#core = core
    this.#host = host
  }

  /** A queue entry is on disk for this prompt and not retired yet. */
  has(messageId: string): boolean {
    return this.#queuedIds.has(messageId)
  }

  /** Prompts are owed a closing record. */
  get owing(): boolean {
    return this.#owed.length > 0
  }

  /** Nothing is owed to the log: no prompt, no interrupted turn, no terminal event (new work writes first). */
  get clear(): boolean {
    const s = this.#core.state
    return this.#owed.length === 0 && !s.inTurn && !s.terminalOwed && this.#interruption === undefined
  }

  /**
   * A prompt's `user_message` (or closing record) is in the log: its queue entry is retired, or
   * its direct acceptance resolves.
   */
  logged(messageId: string): void {
    const direct = this.#direct.get(messageId)
    if (direct) {
      this.#direct.delete(messageId)
      direct.resolve()
    } else if (this.#queuedIds.has(messageId)) void this.unqueue(messageId)
  }

  /** `entry` will not run (`why`): its closing record is written before the next work. */
  owe(entry: QueuedPrompt, why: string): void {
    this.#owed.push({ entry, why })
  }

  /** The open turn stopped for this reason (it is closed with it before the next work). */
  interrupted(why: { message: string; source: 'store' | 'internal' }): void {
    this.#interruption = why
  }

  /** Entries left by a process that stopped before their turns started: each is owed its record. */
  recover(pending: readonly QueuedPrompt[]): void {
    for (const q of pending) this.#queuedIds.add(q.message_id)
    this.#owed.push(...pending.map((entry) => ({ entry, why: entry.steer ? STEER_CRASH : NOT_STARTED_CRASH })))
  }

  /** A queue entry for a prompt (or a steering message: `steer`), in acceptance order. */
  entry(messageId: string, text: string, command: Command | undefined, steer = false): QueuedPrompt {
    return {
      message_id: messageId,
      text,
      ...(command ? { command } : {}),
      ...(steer ? { steer: true as const } : {}),
      accepted_at: Date.now(),
      order: this.#order++,
    }
  }

  /**
   * Write the entry to the store. Rejects with `prompt_not_recorded` when the store refuses it
   * (a full disk), or with the store's own `session_not_found` (the session was deleted under the
   * write), `store_unavailable` (a store server is unreachable: nothing was queued, retry) or
   * `session_busy` (another process holds the session).
   */
  accept(entry: QueuedPrompt): Promise<void> {
    const messageId = entry.message_id
    this.#queuedIds.add(messageId)
    const accepted = this.#core.deps.store.queuePrompt(this.#core.id, entry).catch((err: unknown) => {
      this.#queuedIds.delete(messageId)
      // Another process holds the session (the file store's marker): refused, nothing queued.
      if (ChimeraError.is(err, 'session_not_found', 'store_unavailable', 'session_busy')) throw err
      const why = err instanceof Error ? err.message : String(err)
      throw new ChimeraError('prompt_not_recorded', `event log write failed (prompt not recorded): ${why}`, {
        cause: err,
      })
    })
    accepted.catch(() => {}) // callers that only follow `done` see the failure there
    return accepted
  }

  /**
   * Accept a prompt that starts at once without a queue entry: resolves once its `user_message`
   * is in the log (written by its turn before anything else); rejects with `prompt_not_recorded`
   * when the turn ends without it (the store refused the write).
   */
  acceptDirect(messageId: string): Promise<void> {
    const accepted = new Promise<void>((resolve, reject) => this.#direct.set(messageId, { resolve, reject }))
    accepted.catch(() => {})
    return accepted
  }

  /** A direct acceptance whose `user_message` never reached the log fails with `why`. */
  #notRecorded(messageId: string, why: unknown): void {
    const direct = this.#direct.get(messageId)
    if (!direct) return
    this.#direct.delete(messageId)
    // The store's own refusal, as a refused queue entry reports it (`accept`): a lost lease or an
    // unavailable store stays `store_unavailable` (retry), a deleted session `session_not_found`.
    const cause = why instanceof EventLogError ? why.cause : why
    if (ChimeraError.is(cause, 'session_not_found', 'store_unavailable', 'session_closed', 'session_busy'))
      return direct.reject(cause)
    const text = cause instanceof Error ? cause.message : String(cause)
    direct.reject(
      new ChimeraError('prompt_not_recorded', `event log write failed (prompt not recorded): ${text}`, { cause }),
    )
  }

  /**
   * The queued work of an accepted prompt: once its entry is on disk and what is owed is written,
   * `fn` runs. `turn`: the work writes the prompt's `user_message`, which retires the entry;
   * other work (slash commands) retires it here when it has recorded its result.
   */
  async run(
    entry: QueuedPrompt,
    accepted: Promise<void>,
    fn: () => Promise<TurnOutcome>,
    turn: boolean,
  ): Promise<TurnOutcome> {
    const messageId = entry.message_id
    if (this.#direct.has(messageId)) return this.#runDirect(messageId, fn)
    try {
      await accepted
    } catch (err) {
      return storeFailure(err)
    }
    // Given up meanwhile (Session.abandon): its entry, and what is owed, are the new owner's.
    if (this.#core.abandoned()) return { stop_reason: 'cancelled', success: false, output: '' }
    try {
      await this.settle()
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
    else await this.unqueue(messageId)
    return outcome
  }

  /** A directly accepted prompt's turn: its acceptance fails when it ends without its `user_message` in the log. */
  async #runDirect(messageId: string, fn: () => Promise<TurnOutcome>): Promise<TurnOutcome> {
    let outcome: TurnOutcome
    try {
      outcome = await fn()
    } catch (err) {
      this.#notRecorded(messageId, err)
      throw err
    }
    this.#notRecorded(messageId, outcome.output)
    return outcome
  }

  /**
   * The work of a direct acceptance was dropped before it ran, or its turn failed on a store
   * error (`why`, which the acceptance reports) before its `user_message` was recorded.
   */
  dropDirect(messageId: string, why: unknown): void {
    this.#notRecorded(messageId, why)
  }

  /** Retire a queue entry (its prompt is in the log, or closed). */
  async unqueue(messageId: string): Promise<void> {
    this.#queuedIds.delete(messageId)
    try {
      await this.#core.deps.store.unqueuePrompt(this.#core.id, messageId)
    } catch (err) {
      // Harmless: on the next open an entry whose user_message is in the log is just removed.
      this.#core.deps.logger.warn(`session ${this.#core.id}: queue entry ${messageId} not removed`, err)
    }
  }

  /** Close what is owed before new work: the interrupted turn, then accepted prompts that never ran. */
  async settle(): Promise<void> {
    if (!this.clear) await this.#core.saved() // the last turn's snapshot first: at most one is ever missing
    await this.#closeInterruptedTurn()
    while (this.#owed.length) {
      const { entry, why } = this.#owed[0]!
      await this.#closePrompt(entry, why)
      this.#owed.shift()
    }
  }

  /**
   * An accepted prompt that will not run: its user_message, and a turn that ends with `why`. A
   * steering message whose turn stopped before the model saw it is closed the same way.
   */
  async #closePrompt(p: QueuedPrompt, why: string): Promise<void> {
    await this.#core.emit('user_message', {
      message_id: p.message_id,
      text: p.text,
      ...(p.command ? { command: p.command } : {}),
    })
    await this.#core.emit('turn_start', { prompt: p.text, model: this.#core.state.model })
    await endTurn(this.#host, { stop_reason: 'error', success: false, output: why, source: 'internal' }, 0)
    // A turn in the messages is an undo step: this one changed nothing (the history keeps
    // counting every turn, so a restart lines it up with the messages).
    await commitFiles(this.#core, [])
    await this.unqueue(p.message_id)
  }

  /** A turn the process did not finish (it stopped mid-turn): close it before the next one. */
  async #closeInterruptedTurn(): Promise<void> {
    const state = this.#core.state
    if (!state.inTurn && !state.terminalOwed) return
    const why = this.#interruption ?? { message: INTERRUPTED_CRASH, source: 'internal' as const }
    if (!state.inTurn) {
      // Its turn_end is in the log, its terminal event is not: only that is owed.
      await this.#core.emit('error', { message: why.message, source: why.source })
      this.#interruption = undefined
      return
    }
    const callError = `interrupted: ${this.#interruption ? why.message : 'the process stopped before this call finished'}`
    for (const [callId, tool] of state.openCalls) {
      await this.#core.emit('tool_result', { call_id: callId, tool, ok: false, error: callError, duration_ms: 0 })
    }
    await endTurn(this.#host, { stop_reason: 'error', success: false, output: why.message, source: why.source }, 0)
    this.#interruption = undefined
  }
}
