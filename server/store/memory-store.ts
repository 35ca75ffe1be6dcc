/**
 * An `EventStore` kept in memory: for `persist: false` sessions and tests. Same validation,
 * counter checks and notification order as the file store; stored values are JSON copies, so
 * callers get back exactly what a file-store reader would and cannot mutate the log.
 *
 * Bounded: at most `maxSessions` sessions (creating one more is a clear `store_full` error;
 * the session manager removes a memory session when it is deleted or evicted) and at most
 * `maxEventsPerSession` events per session (the oldest are dropped; a stream from a cursor
 * before the oldest kept event reports the gap).
 */
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { noopLogger, type Logger } from '../log.ts'
import { ChimeraError, sessionNotFound } from '../errors.ts'
import { streamEvents } from './event-stream.ts'
import { ListenerRegistry } from './listeners.ts'
import { applyListFilter, pageOf } from './listing.ts'
import { agentOf, isSessionId } from './paths.ts'
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
import { sortQueued } from './queued-prompts.ts'
import { checkNextSeq, checkSessionId, jsonCopy, validateEvent, validateMeta, validateSummary } from './validate.ts'

export const MEMORY_MAX_SESSIONS = 1000
export const MEMORY_MAX_EVENTS_PER_SESSION = 20_000

interface MemorySession {
  meta: SessionMeta
  summary: SessionSummary
  /** The retained events (the newest `maxEventsPerSession`), contiguous. */
  events: AnyEvent[]
  lastSeq: number
  queued: Map<string, QueuedPrompt>
}

/** The in-memory `EventStore`. */
export class MemoryEventStore implements EventStore {
  readonly #sessions = new Map<string, MemorySession>()
  readonly #listeners: ListenerRegistry
  readonly #maxSessions: number
  readonly #maxEvents: number

  constructor(opts: { logger?: Logger; maxSessions?: number; maxEventsPerSession?: number } = {}) {
    this.#listeners = new ListenerRegistry(opts.logger ?? noopLogger)
    this.#maxSessions = opts.maxSessions ?? MEMORY_MAX_SESSIONS
    this.#maxEvents = opts.maxEventsPerSession ?? MEMORY_MAX_EVENTS_PER_SESSION
  }

  async create(meta: SessionMeta, summary: SessionSummary): Promise<void> {
    validateMeta(meta)
    validateSummary(meta.session_id, summary)
    if (this.#sessions.has(meta.session_id))
      throw new ChimeraError('session_exists', `session ${meta.session_id} already exists`)
    if (this.#sessions.size >= this.#maxSessions) {
      throw new ChimeraError(
        'store_full',
        `the in-memory store holds its maximum of ${this.#maxSessions} sessions; delete one or use a persisted session`,
      )
    }
    this.#sessions.set(meta.session_id, {
      meta: jsonCopy(meta),
      summary: jsonCopy(summary),
      events: [],
      lastSeq: 0,
      queued: new Map(),
    })
  }

  /** Synchronous inside: appends of one session take effect (and notify) in call order. */
  async append(event: AnyEvent): Promise<void> {
    const e = validateEvent(event)
    const s = this.#get(e.session_id)
    checkNextSeq(e.session_id, e.seq, s.lastSeq)
    s.events.push(jsonCopy(e))
    s.lastSeq = e.seq
    if (s.events.length > this.#maxEvents) s.events.splice(0, s.events.length - this.#maxEvents)
    this.#listeners.notify(e)
  }

  async read(sessionId: string, afterSeq = 0): Promise<AnyEvent[]> {
    return jsonCopy(this.#after(sessionId, afterSeq))
  }

  async queuePrompt(sessionId: string, prompt: QueuedPrompt): Promise<void> {
    this.#get(sessionId).queued.set(prompt.message_id, jsonCopy(prompt))
  }

  async unqueuePrompt(sessionId: string, messageId: string): Promise<void> {
    this.#sessions.get(sessionId)?.queued.delete(messageId)
  }

  async writeSummary(sessionId: string, summary: SessionSummary): Promise<void> {
    validateSummary(sessionId, summary)
    this.#get(sessionId).summary = jsonCopy(summary)
  }

  async load(sessionId: string): Promise<LoadedSession | undefined> {
    checkSessionId(sessionId)
    const s = this.#sessions.get(sessionId)
    return (
      s && {
        meta: jsonCopy(s.meta),
        summary: jsonCopy(s.summary),
        events: jsonCopy(s.events),
        queued: jsonCopy(sortQueued([...s.queued.values()])),
        repaired: false,
      }
    )
  }

  async list(filter: ListFilter = {}): Promise<SessionSummary[]> {
    return jsonCopy(
      applyListFilter(
        [...this.#sessions.values()].map((s) => s.summary),
        filter,
      ),
    )
  }

  async listPage(query: PageQuery = {}): Promise<SessionPage> {
    return jsonCopy(
      pageOf(
        [...this.#sessions.values()].map((s) => s.summary),
        query,
      ),
    )
  }

  async *scanSummaries(opts: { agents?: AgentPrefix[] } = {}): AsyncIterable<StoredSummary> {
    for (const [id, s] of [...this.#sessions]) {
      const agent = agentOf(id)
      if (opts.agents === undefined || (agent !== undefined && opts.agents.includes(agent)))
        yield { session_id: id, summary: jsonCopy(s.summary) }
    }
  }

  async readSession(sessionId: string): Promise<StoredSession | undefined> {
    const s = isSessionId(sessionId) ? this.#sessions.get(sessionId) : undefined
    return s && { meta: jsonCopy(s.meta), summary: jsonCopy(s.summary), events: jsonCopy(s.events) }
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    checkSessionId(sessionId)
    return this.#listeners.add(sessionId, listener)
  }

  stream(sessionId: string, opts: StreamOptions = {}): AsyncIterable<AnyEvent> {
    this.#get(sessionId)
    return streamEvents(
      {
        subscribe: (id, l) => this.subscribe(id, l),
        read: async (id, after) => ({ events: await this.read(id, after), more: false }),
      },
      sessionId,
      opts,
    )
  }

  async remove(sessionId: string): Promise<void> {
    checkSessionId(sessionId)
    this.#sessions.delete(sessionId)
  }

  #after(sessionId: string, afterSeq: number): AnyEvent[] {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0)
      throw new RangeError(`afterSeq must be a non-negative integer, got ${afterSeq}`)
    const s = this.#get(sessionId)
    const first = s.events[0]?.seq ?? s.lastSeq + 1
    return s.events.slice(Math.max(0, afterSeq - first + 1))
  }

  #get(sessionId: string): MemorySession {
    checkSessionId(sessionId)
    const s = this.#sessions.get(sessionId)
    if (!s) throw sessionNotFound(sessionId)
    return s
  }
}
