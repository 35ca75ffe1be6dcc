/**
 * The event-store interface (docs/core.md, §6, §8). The file store is the embedded default; an
 * engine such as Redis Streams or PostgreSQL can implement the same interface later.
 *
 * Contract:
 * - `append` persists an event before it resolves, and only then notifies subscribers, in
 *   `seq` order per session. Appends of one session are serialised; sessions are independent.
 * - `load` rebuilds a session from storage: its meta, summary and events. A torn or partial
 *   last record (a crash mid-write) is detected and dropped — never half-read — so the events
 *   returned are an exact prefix of what was appended.
 * - `list` returns summaries, newest first, filtered.
 * - `stream` yields catch-up then live events with no gap or duplicate (event-stream.ts).
 */
import type { AnyEvent } from '../events/event-types.ts'
import type { SessionSummary } from '../../generated/schemas.gen.ts'

export type AgentPrefix = 'otter' | 'ferret' | 'mink'

/** What a session is, fixed at creation (persisted as `session.json`). */
export interface SessionMeta {
  session_id: string
  agent: AgentPrefix
  cwd: string
  model: string
  mode: string
  allowed_tools?: string[]
  max_steps?: number
  /** The approval policy the session was created with (later changes are events). */
  approval?: 'allow' | 'deny' | 'ask' | 'auto' | 'read-only'
  created_at: string
}

export interface ListFilter {
  limit?: number
  /** Only sessions started at or after this instant. */
  since?: Date
  /** Exact model match (`GET /sessions`); `modelContains` is the case-insensitive `/runs` form. */
  model?: string
  modelContains?: string
  /** Which agents' sessions (directory prefixes); default all. */
  agents?: AgentPrefix[]
}

/**
 * A prompt a client was told is accepted, recorded before that acknowledgement and forgotten
 * once its turn's `user_message` is in the log (or it was closed with a terminal record). What
 * is left after a crash is what was accepted and never started.
 */
export interface QueuedPrompt {
  message_id: string
  text: string
  /** A custom command's name and arguments (the turn's `user_message.command`). */
  command?: { name: string; arguments: string }
  /** When it was accepted (ms since the epoch); with `order`, its place in the queue. */
  accepted_at: number
  order: number
}

export interface LoadedSession {
  meta: SessionMeta
  summary: SessionSummary
  events: AnyEvent[]
  /** Prompts accepted but not taken off the queue (see {@link QueuedPrompt}), in queue order. */
  queued: QueuedPrompt[]
  /** True when a torn tail record was found and dropped. */
  repaired: boolean
}

export type EventListener = (event: AnyEvent) => void

/** Options of {@link EventStore.stream}. */
export interface StreamOptions {
  /** Yield events with `seq > afterSeq` (default 0: everything). */
  afterSeq?: number
  /** Ends the stream (the iterator returns). */
  signal?: AbortSignal
  /** Live events buffered before a slow consumer falls back to catch-up reads. */
  highWaterMark?: number
  /** Called when the store no longer holds events `from..to` (a bounded memory store). */
  onGap?(from: number, to: number): void
}

export interface EventStore {
  /** Create storage for a new session. */
  create(meta: SessionMeta, summary: SessionSummary): Promise<void>
  /** Persist one event (its `seq` must be the session's next), then notify subscribers. */
  append(event: AnyEvent): Promise<void>
  /** Events with `seq > afterSeq`, in order. */
  read(sessionId: string, afterSeq?: number): Promise<AnyEvent[]>
  /**
   * Record an accepted prompt before it is acknowledged (durable like an event: on disk, fsynced
   * when the store fsyncs). Rejects when it could not be recorded; then it must not be queued.
   */
  queuePrompt(sessionId: string, prompt: QueuedPrompt): Promise<void>
  /** Forget a queued prompt (its turn's `user_message` or its closing record is in the log). */
  unqueuePrompt(sessionId: string, messageId: string): Promise<void>
  /** Replace the session's summary. */
  writeSummary(sessionId: string, summary: SessionSummary): Promise<void>
  /** Rebuild a session; undefined when it does not exist. */
  load(sessionId: string): Promise<LoadedSession | undefined>
  /** Summaries, newest first. */
  list(filter?: ListFilter): Promise<SessionSummary[]>
  /** Called after each event of the session is persisted; returns an unsubscribe function. */
  subscribe(sessionId: string, listener: EventListener): () => void
  /**
   * The persisted events after `afterSeq`, then live ones as they are persisted: no gap and
   * no duplicate at the seam, bounded memory for a slow consumer (event-stream.ts). Ends when
   * `signal` aborts; throws `session_not_found` for an unknown session.
   */
  stream(sessionId: string, opts?: StreamOptions): AsyncIterable<AnyEvent>
  /** Remove a session's stored data. */
  remove(sessionId: string): Promise<void>
  /** Drop what the store keeps in memory for a session that is no longer live (optional). */
  release?(sessionId: string): void
}
