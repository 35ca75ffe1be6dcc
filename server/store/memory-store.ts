/**
 * An `EventStore` kept in memory: for `persist: false` sessions and tests. Same validation,
 * counter checks and notification order as the file store; stored values are JSON copies, so
 * callers get back exactly what a file-store reader would and cannot mutate the log.
 */
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from '../core/events.ts'
import { noopLogger, type Logger } from '../log.ts'
import { StoreError } from './errors.ts'
import { ListenerRegistry } from './listeners.ts'
import { applyListFilter } from './listing.ts'
import type { EventListener, EventStore, ListFilter, LoadedSession, SessionMeta } from './types.ts'
import { checkNextSeq, checkSessionId, jsonCopy, validateEvent, validateMeta, validateSummary } from './validate.ts'

interface MemorySession {
  meta: SessionMeta
  summary: SessionSummary
  events: AnyEvent[]
}

/** The in-memory `EventStore`. */
export class MemoryEventStore implements EventStore {
  readonly #sessions = new Map<string, MemorySession>()
  readonly #listeners: ListenerRegistry

  constructor(opts: { logger?: Logger } = {}) {
    this.#listeners = new ListenerRegistry(opts.logger ?? noopLogger)
  }

  async create(meta: SessionMeta, summary: SessionSummary): Promise<void> {
    validateMeta(meta)
    validateSummary(meta.session_id, summary)
    if (this.#sessions.has(meta.session_id)) throw new StoreError('session_exists', `session ${meta.session_id} already exists`)
    this.#sessions.set(meta.session_id, { meta: jsonCopy(meta), summary: jsonCopy(summary), events: [] })
  }

  /** Synchronous inside: appends of one session take effect (and notify) in call order. */
  async append(event: AnyEvent): Promise<void> {
    const e = validateEvent(event)
    const s = this.#get(e.session_id)
    checkNextSeq(e.session_id, e.seq, s.events.length)
    s.events.push(jsonCopy(e))
    this.#listeners.notify(e)
  }

  async read(sessionId: string, afterSeq = 0): Promise<AnyEvent[]> {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new RangeError(`afterSeq must be a non-negative integer, got ${afterSeq}`)
    return jsonCopy(this.#get(sessionId).events.slice(afterSeq))
  }

  async writeSummary(sessionId: string, summary: SessionSummary): Promise<void> {
    validateSummary(sessionId, summary)
    this.#get(sessionId).summary = jsonCopy(summary)
  }

  async load(sessionId: string): Promise<LoadedSession | undefined> {
    checkSessionId(sessionId)
    const s = this.#sessions.get(sessionId)
    return s && { ...jsonCopy(s), repaired: false }
  }

  async list(filter: ListFilter = {}): Promise<SessionSummary[]> {
    return jsonCopy(applyListFilter([...this.#sessions.values()].map((s) => s.summary), filter))
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    checkSessionId(sessionId)
    return this.#listeners.add(sessionId, listener)
  }

  async remove(sessionId: string): Promise<void> {
    checkSessionId(sessionId)
    this.#sessions.delete(sessionId)
  }

  #get(sessionId: string): MemorySession {
    checkSessionId(sessionId)
    const s = this.#sessions.get(sessionId)
    if (!s) throw new StoreError('session_not_found', `session ${sessionId} not found`)
    return s
  }
}
