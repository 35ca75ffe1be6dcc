/**
 * A session's queue driving: prompts accepted (their queue entries written before they run,
 * prompt-ledger.ts) and work run one at a time behind the running turn (work-queue.ts), the
 * session's status while work runs, and closing: queued work answered, accepted prompts that
 * will not run closed in the log, in order.
 */
import type { Logger } from '../log.ts'
import type { QueuedPrompt } from '../store/types.ts'
import { ChimeraError } from '../errors.ts'
import type { TurnOutcome } from './loop.ts'
import { storeFailure, type PromptLedger } from './prompt-ledger.ts'
import type { Command, SessionStatus, Submitted } from './session-types.ts'
import { WorkQueue, type Work } from './work-queue.ts'

export interface SessionQueueDeps {
  id: string
  ledger: PromptLedger
  logger: Logger
  /** Runs before the queue's first work (work-queue.ts `before`). */
  before(): Promise<void> | undefined
  /** `before` has nothing (more) to do: work pushed to an idle queue starts at once. */
  ready(): boolean
}

export class SessionQueue {
  /** idle → running → cancelled → idle (the running turn and Session.cancel set it too). */
  status: SessionStatus = 'idle'
  #closed = false
  /** Why the session's copy gave it up (Session.abandon): a prompt sent to it now is refused. */
  #givenUp: string | undefined
  readonly #deps: SessionQueueDeps
  readonly #queue: WorkQueue

  constructor(deps: SessionQueueDeps) {
    this.#deps = deps
    this.#queue = new WorkQueue({
      before: () => deps.before(),
      drained: () => {
        if (this.status === 'running') this.status = 'idle' // work closed before it ran
      },
    })
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Work waiting to run (not counting the running one). */
  get length(): number {
    return this.#queue.length
  }

  /** Resolves when no work is running or queued. */
  idle(): Promise<void> {
    return this.#queue.idle()
  }

  /** After a restart: `pending` prompts are owed to the log, `stale` entries only removed; first in the queue. */
  recover(pending: QueuedPrompt[], stale: QueuedPrompt[]): void {
    this.#deps.ledger.recover(pending)
    this.#queue.push({ run: () => this.#settleNow(stale), cancelQueued: () => {} })
  }

  /** Retire `stale` entries and write what is owed; a store that still refuses is logged (tried again before the next work). */
  async #settleNow(stale: readonly QueuedPrompt[] = []): Promise<void> {
    const { ledger } = this.#deps
    for (const q of stale) await ledger.unqueue(q.message_id)
    try {
      await this.withStatus(() => ledger.settle())
    } catch (err) {
      this.#deps.logger.error(`session ${this.#deps.id}: accepted prompts not closed yet`, err)
    }
  }

  /**
   * Accept a prompt: its queue entry goes to the store now (`accepted` resolves once it is on
   * disk) and its work joins the queue in call order. A prompt the store refused fails at once
   * (`accepted` rejects with `prompt_not_recorded`, `done` resolves with a `store` error) and
   * runs nothing (prompt-ledger.ts).
   */
  submit(
    messageId: string,
    text: string,
    command: Command | undefined,
    fn: () => Promise<TurnOutcome>,
    turn = false,
  ): Submitted {
    if (this.#givenUp !== undefined) {
      // Not recorded: the client retries, and the command reaches the instance that runs it now.
      const err = new ChimeraError(
        'store_unavailable',
        `session ${this.#deps.id}: not recorded (${this.#givenUp}); retry`,
      )
      const accepted = Promise.reject(err)
      accepted.catch(() => {})
      return { messageId, done: Promise.resolve(storeFailure(err)), accepted }
    }
    if (this.#closed)
      return {
        messageId,
        done: Promise.resolve(failedOutcome(turn ? '' : 'the session was closed')),
        accepted: Promise.resolve(),
      }
    const { ledger } = this.#deps
    const entry = ledger.entry(messageId, text, command)
    // A turn that starts at once writes its user_message before anything else: that record is
    // its acceptance, with no queue entry to write and remove (prompt-ledger.ts).
    const direct = turn && !this.#queue.busy && this.#deps.ready() && ledger.clear
    const accepted = direct ? ledger.acceptDirect(messageId) : ledger.accept(entry)
    const done = this.enqueue(
      () => ledger.run(entry, accepted, fn, turn),
      failedOutcome(turn ? '' : 'the session was closed'),
      direct ? undefined : { entry, accepted },
      direct
        ? () => ledger.dropDirect(messageId, new ChimeraError('session_closed', 'the session was closed'))
        : undefined,
    )
    // Busy from acceptance: the turn starts once its entry is on disk (a direct one at once).
    this.status = 'running'
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

  /** Run `fn` with the session running; idle after it unless work is queued. */
  async withStatus<T>(fn: () => Promise<T>): Promise<T> {
    this.status = 'running'
    try {
      return await fn()
    } finally {
      this.status = this.#queue.length ? 'running' : 'idle'
    }
  }

  /** Queue work behind the running turn; `onClose` answers it if the session closes first. */
  enqueue<T>(fn: () => Promise<T>, onClose: T | undefined, prompt?: Work['prompt'], onCancel?: () => void): Promise<T> {
    const closed = (resolve: (v: T) => void, reject: (e: unknown) => void): void =>
      onClose === undefined
        ? reject(new ChimeraError('session_closed', `session ${this.#deps.id} was closed`))
        : resolve(onClose)
    return new Promise<T>((resolve, reject) => {
      if (this.#closed) return closed(resolve, reject)
      this.#queue.push({
        run: async () => {
          try {
            resolve(await fn())
          } catch (err) {
            reject(err)
          }
        },
        cancelQueued: () => {
          onCancel?.()
          closed(resolve, reject)
        },
        ...(prompt ? { prompt } : {}),
      })
    })
  }

  /** Refuse work from now on (`givenUp`: the copy gave the session up, a prompt is refused as not recorded); false when it was already closed. */
  close(givenUp?: string): boolean {
    this.#givenUp ??= givenUp
    if (this.#closed) return false
    this.#closed = true
    return true
  }

  /**
   * Answer the queued work as closed, leaving the accepted prompts it held to whoever runs the
   * session now (their queue entries stay in the log: session.ts `abandon`).
   */
  abandonQueued(): void {
    for (const q of this.#queue.drain()) q.cancelQueued()
  }

  /**
   * Answer the queued work as closed and close the accepted prompts it held in the log (in
   * order, after the running work), with `reason` in the turn's `error`.
   */
  dropQueued(reason: string | undefined): void {
    const { ledger } = this.#deps
    const dropped = this.#queue.drain()
    for (const q of dropped) q.cancelQueued()
    const prompts = dropped.flatMap((q) => (q.prompt ? [q.prompt] : []))
    if (prompts.length || ledger.owing) {
      const why = `not run: ${reason ?? 'the session was closed'} before this prompt's turn started`
      this.#queue.push({
        run: async () => {
          for (const p of prompts) {
            const recorded = await p.accepted.then(
              () => true,
              () => false,
            )
            if (recorded) ledger.owe(p.entry, why)
          }
          await this.#settleNow()
        },
        cancelQueued: () => {},
      })
    }
  }
}

function failedOutcome(output: string): TurnOutcome {
  return { stop_reason: 'cancelled', success: false, output }
}
