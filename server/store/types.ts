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
 * - `list` returns summaries, newest first, filtered; `listPage` pages through the same rows by
 *   cursor; `scanSummaries` yields every stored summary as written (the run rollups).
 * - `readSession` reads a session without changing anything (another process may own it).
 * - `stream` yields catch-up then live events with no gap or duplicate (event-stream.ts).
 */
import type { AnyEvent } from '../events/event-types.ts'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { StoredRecord } from './stored-lines.ts'
import type { SessionHolder } from './session-owner.ts'

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
  /** Only sessions whose working directory (`working_dir`) is exactly this. */
  cwd?: string
}

/**
 * A page request: the filter, at most `limit` rows (absent: all the rest), after `cursor`.
 * The order is the listing order of `listing.ts` (`compareListed`): newest first by start
 * (`started_at`, else `created_at`, else the instant in the id; a session with none of them
 * last), ties by session id descending.
 */
export interface PageQuery extends ListFilter {
  /**
   * A `nextCursor` of an earlier page (any filter): the page holds only rows after that row in
   * the listing order. Opaque (listing.ts `encodeCursor`): it names a position, not an offset,
   * so sessions created or deleted meanwhile neither repeat nor skip a row. A cursor that is not
   * one is a `ChimeraError` `invalid_cursor`.
   */
  cursor?: string
}

/** One page of a listing. */
export interface SessionPage {
  /** The rows, in the listing order. */
  sessions: SessionSummary[]
  /** Present exactly when rows after the last one here pass the filter: pass it as `cursor`. */
  nextCursor?: string
}

/** One entry of {@link EventStore.scanSummaries}. */
export interface StoredSummary {
  /**
   * The session's id as stored. For the file store: the directory name, any
   * `<otter|ferret|mink>-<id characters>` name (sessions written by other tools have looser ids
   * than `newSessionId` makes), so it is not necessarily a valid `SessionId`.
   */
  session_id: string
  /** The stored summary parsed as JSON and NOT validated; undefined when missing or not JSON. */
  summary: unknown
}

/** A session's summary and every event (`GET /sessions/{id}`, `sessions show`, transcripts). */
export interface SessionDetail {
  session_id: string
  summary: SessionSummary
  events: AnyEvent[]
}

/** A session read without changing anything (see {@link EventStore.readSession}). */
export interface StoredSession {
  meta: SessionMeta
  summary: SessionSummary
  /** The valid prefix of the log (a torn or invalid record and what follows are left out). */
  events: AnyEvent[]
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
  /** A steering message for a running turn (retired by its `steering` event, not a `user_message`). */
  steer?: true
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
  /**
   * Another live process holds the session (the file store's owner marker, session-owner.ts):
   * it was read as it is (nothing repaired, `queued` empty: the holder's business), and every
   * write to it is refused with `session_busy` until that process lets it go.
   */
  heldBy?: SessionHolder
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
  /**
   * Persist consecutive events of one session (the first's `seq` the session's next) as one group
   * commit, then notify subscribers in order; the same guarantee as `append` for each. On a
   * failure rejects with an {@link AppendGroupError}: its `committed` first events are in the log
   * (and notified), the others are not. Optional: without it the events are appended one by one.
   */
  appendMany?(events: readonly AnyEvent[]): Promise<void>
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
  /** Summaries that pass `filter`, newest first (the order of {@link PageQuery}), at most `limit`. */
  list(filter?: ListFilter): Promise<SessionSummary[]>
  /**
   * One page of the stored sessions that pass the filter, in the listing order, after
   * `query.cursor`, at most `query.limit` rows. A session whose stored summary is damaged is
   * listed from its meta (as `list`); one with neither is left out. Live, not-yet-persisted
   * state is the manager's business (listing.ts `listSessions` merges it).
   */
  listPage(query?: PageQuery): Promise<SessionPage>
  /**
   * Every stored session's summary as written, in no particular order, without validating it
   * and without reading events (cheap per session: the run rollups read ten thousand). Only the
   * given agents' sessions (default all). Rejects (when iterated) if the store itself cannot be
   * read; a missing store yields nothing.
   */
  scanSummaries(opts?: { agents?: AgentPrefix[] }): AsyncIterable<StoredSummary>
  /**
   * A session's meta, summary (rebuilt from the meta when the stored one is damaged; not written
   * back) and the valid prefix of its events, read only: nothing is repaired, moved, cached or
   * written, so it is safe while another process appends. Undefined when `sessionId` is not a
   * valid id or no such session is stored (or its meta is unreadable). Queued prompts are not
   * included (`load` has them).
   */
  readSession(sessionId: string): Promise<StoredSession | undefined>
  /** Called after each event of the session is persisted; returns an unsubscribe function. */
  subscribe(sessionId: string, listener: EventListener): () => void
  /**
   * The persisted events after `afterSeq`, then live ones as they are persisted: no gap and
   * no duplicate at the seam, bounded memory for a slow consumer (event-stream.ts). Ends when
   * `signal` aborts; throws `session_not_found` for an unknown session.
   */
  stream(sessionId: string, opts?: StreamOptions): AsyncIterable<AnyEvent>
  /**
   * A page of the records after `afterSeq` (none after `upTo`) as stored, for a replay that sends
   * them without parsing and re-serialising each (stored-lines.ts); undefined when the store
   * cannot serve them so, or holds them all in memory (then `stream` sends them). `more`: records
   * up to `upTo` remain. `release` (when given): the caller is done with the records, so the
   * page's buffer may be reused
   * (docs/decisions/0435-replay-buffers-reused.md); a caller that keeps records does not call it.
   */
  readStored?(sessionId: string, afterSeq: number, upTo: number): Promise<StoredRecordPage | undefined>
  /**
   * The records of a session this instance does not hold open, as far as the store vouches for
   * them without opening it (a checksum it wrote when it last held the session): for a replay
   * that need not load the session first. Undefined when it cannot vouch (then the session is
   * loaded, as for any other request). `more`: the store holds records after `lines`.
   */
  readVouched?(sessionId: string): Promise<VouchedRecords | undefined>
  /** Remove a session's stored data. */
  remove(sessionId: string): Promise<void>
  /** Drop what the store keeps in memory for a session that is no longer live (optional). */
  release?(sessionId: string): void
  /**
   * False when this process does not hold the session's owner marker (the file store, one
   * writer per session across processes): a copy read without it may be out of date — another
   * process may have written since — so the manager reads it again before use. Absent: stores
   * without markers.
   */
  holdsMarker?(sessionId: string): boolean
  /**
   * For a session this process does not hold (`holdsMarker` false): true when another live
   * process holds it now or its log is no longer the `lastSeq` events a copy was read with.
   */
  changedElsewhere?(sessionId: string, lastSeq: number): Promise<boolean>
  /**
   * Let go of what the store holds open (file descriptors, connections) once its owner is done
   * with it (optional).
   */
  close?(): Promise<void>
}

/** A page of stored records (EventStore.readStored). */
export interface StoredRecordPage {
  records: StoredRecord[]
  more: boolean
  release?(): void
}

/** What {@link EventStore.readVouched} gives: records 1..`lines`, served a page at a time. */
export interface VouchedRecords {
  lines: number
  /** Records may follow `lines` (the store did not vouch for them). */
  more: boolean
  /**
   * The records after `afterSeq` (at most `lines`), a page at a time; `more` until the last.
   * Undefined when the store can no longer vouch for them (the caller loads the session then).
   */
  page(afterSeq: number): Promise<StoredRecordPage | undefined>
}

/** What {@link SessionLeases.claim} found. */
export type LeaseClaim =
  /**
   * This instance holds the lease; `fresh` when it did not hold it without a break before this
   * claim (another instance may have written); `length` = stored events.
   */
  | { kind: 'mine'; fresh: boolean; length: number }
  /** Another instance holds it. */
  | { kind: 'other'; owner: string }
  /** No such session. */
  | { kind: 'none' }

/**
 * Ownership of running sessions among instances that share one store (docs/scale-out.md,
 * docs/decisions/0330-session-leases.md): one instance at a time holds a session's lease, renews
 * it while it lives and releases it when the session is idle; the store refuses another
 * instance's appends (fencing), so an owner that lost its lease cannot write after it.
 */
export interface SessionLeases {
  /** This instance's id (the lease value; other instances forward commands to it). */
  readonly instanceId: string
  /** Lease time-to-live and renewal period (ms): a dead owner's lease is gone at most `ttlMs` after it died. */
  readonly ttlMs: number
  readonly renewMs: number
  /** Hold the session's lease (if it is free or already this instance's). */
  claim(sessionId: string): Promise<LeaseClaim>
  /** True while this instance holds the lease (as far as it knows: renewed within the TTL). */
  holds(sessionId: string): boolean
  /** The instance holding the lease now, if any (read from the store). */
  owner(sessionId: string): Promise<string | undefined>
  /** True while that instance runs (it renewed its liveness key within the lease TTL). */
  instanceAlive(instanceId: string): Promise<boolean>
  /** Give the lease up (if held). */
  release(sessionId: string): Promise<void>
  /** Keep the lease while this runs (never released as idle meanwhile). */
  using<T>(sessionId: string, fn: () => Promise<T>): Promise<T>
  /** What the session manager says and does (see {@link LeaseHooks}). */
  setHooks(hooks: LeaseHooks): void
}

/** The session manager's side of the leases. */
export interface LeaseHooks {
  /** True when the session runs nothing here (its lease may be released). */
  idle(sessionId: string): boolean
  /** The lease was lost (taken over, or not renewed within its TTL): the local copy is stale. */
  lost(sessionId: string): void
  /**
   * The sweep claimed this session because its owner's lease ran out (the owner died, or was
   * paused past the TTL; `length`: the events stored): close what the owner left open, as the
   * claim of a command would. Absent: this instance does not sweep.
   */
  expired?(sessionId: string, length: number): Promise<void>
}

/**
 * What instances sharing a store know together of the singular family (docs/scale-out.md
 * "Session tokens and live sessions"): which sessions are live — touched within the idle TTL on
 * any instance, as a session in one server's memory — and the SHA-256 digest of each one's
 * bearer token (never the token). A token is valid while its session is live, until it is
 * rotated or the session deleted.
 */
export interface LiveSessions {
  /**
   * The stored session was touched now (it becomes live); false when it is not stored (deleted).
   * With `ifLive`, only a session that is still live is touched: false when it is not (never
   * made live, or past the TTL).
   */
  touch(sessionId: string, opts?: { ifLive?: boolean }): Promise<boolean>
  /** Touches seen on this instance (id → ms), published so every instance knows them (stored sessions only). */
  touched(entries: ReadonlyMap<string, number>): Promise<void>
  /** The live sessions' ids, most recently touched first. */
  list(): Promise<string[]>
  /** The session is deleted: no longer live, its token gone; every instance is told. */
  forget(sessionId: string): Promise<void>
  /** Call `forgotten` with the id of each session deleted on any instance from now on; returns a stop function. */
  onForgotten(forgotten: (sessionId: string) => void): () => void
  /** The session's token now has this digest (hex); any earlier token is dead. False: no such session. */
  setToken(sessionId: string, digest: string): Promise<boolean>
  /** The session has no token any more. */
  dropToken(sessionId: string): Promise<void>
  /** The live session whose current token has this digest (hex), if any. */
  sessionOfToken(digest: string): Promise<string | undefined>
}

/** `appendMany` failed part way: the first `committed` events of the group are in the log, the rest are not. */
export class AppendGroupError extends Error {
  override name = 'AppendGroupError'
  readonly committed: number
  constructor(committed: number, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
    this.committed = committed
  }
}
