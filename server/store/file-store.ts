/**
 * The embedded event store (docs/core.md, §6): one directory per session under the event-log
 * root holding `session.json` (meta), `summary.json` (replaced atomically) and one
 * `event-NNNNNN-<type>.json` per event (its JSON and a newline, created exclusively), and a
 * `queued-<message_id>.json` per prompt accepted but not yet started (queued-prompts.ts).
 *
 * Each session's operations run through its own promise queue, so appends are serialised and
 * checked against the counter; sessions never wait on one another. The first operation on a
 * session this instance has not seen (after a restart) scans its log and repairs it: the first
 * record that is torn, out of sequence or invalid ends the log, and it and everything after it
 * move to `quarantine/` in the session directory. Session ids pass `isSessionId` before any path
 * is built from them.
 *
 * One writer per session across processes (session-owner.ts, docs/decisions/0431-one-writer-per-session.md):
 * a session's owner marker (`owner.json`) is taken before the first operation that may write or
 * repair it (create, the open of a write or a load) and dropped by `release`, `remove` and
 * `close`. A session another live process holds is served read only: `load` and the reads scan
 * it as it is (the first bad record ends what is read; nothing is repaired, moved, unlinked or
 * written) and every write is refused with `session_busy` naming the holder.
 *
 * Beside the event files each session has a derived segment, `events.jsonl` (segment.ts,
 * docs/decisions/0130-event-segment.md): the same records in one file, appended after each
 * event file and verified against the directory listing when a session is opened, so reads
 * (a long replay above all) take one file read instead of one per event. Damage to it is cut
 * and rebuilt from the event files; it is never needed for correctness.
 */
import { readFile } from 'node:fs'
import { mkdir, readdir, rm, rmdir, stat, unlink, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { noopLogger, type Logger } from '../log.ts'
import { ChimeraError, sessionNotFound } from '../errors.ts'
import {
  errCode,
  logEntries,
  mapLimit,
  quarantine,
  readJsonFile,
  scanEntries,
  scanLog,
  syncDir,
  writeEventFile,
  writeEventFiles,
  writeOnThread,
  writeExclusive,
  writeJsonAtomic,
  type GroupWritten,
  type LogEntry,
} from './file-log.ts'
import { streamEvents } from './event-stream.ts'
import { eventFileThread, NotSentError } from './event-file-worker.ts'
import { ListenerRegistry } from './listeners.ts'
import { dirStamp, ListingMemo, type DirStamp, type ListingFacts } from './listing-memo.ts'
import { RecentRing } from './recent-ring.ts'
import {
  crc32,
  readSegment,
  readSegmentLines,
  readSegmentRecords,
  readVouchedPage,
  readVouchedSegment,
  SEGMENT_PAGE_BYTES,
  rewriteSegmentTail,
  SegmentWriters,
  SUM_FILE,
  writeSegmentSum,
} from './segment.ts'
import type { StoredRecord } from './stored-lines.ts'
import {
  dropOwner,
  freshOwner,
  OWNER_FILE,
  OWNER_HEARTBEAT_MS,
  ownerRecord,
  ownIdentity,
  liveOwner,
  readOwnerAsync,
  sessionHeld,
  takeOwner,
  type SessionHolder,
} from './session-owner.ts'
import { agentAllowed, applyListFilter, pageOf } from './listing.ts'
import { AGENT_PREFIXES, eventFileName, isSessionId, sessionDir } from './paths.ts'
import { hasQueued, readQueued, removeQueued, writeQueued } from './queued-prompts.ts'
import {
  AppendGroupError,
  type AgentPrefix,
  type EventListener,
  type EventStore,
  type ListFilter,
  type LoadedSession,
  type PageQuery,
  type QueuedPrompt,
  type SessionMeta,
  type SessionPage,
  type StoredSession,
  type StoredSummary,
  type StreamOptions,
  type VouchedRecords,
} from './types.ts'
import {
  checkNextSeq,
  checkSessionId,
  metaProblem,
  minimalSummary,
  validateEvent,
  validateMeta,
  validateSummary,
} from './validate.ts'

export interface FileEventStoreOptions {
  /** The event-log directory (`eventlogRoot(chimeraHome())` in the server). */
  root: string
  logger?: Logger
  /** fsync every event and summary file: survives power loss, not just a process crash. */
  fsync?: boolean
  /** Events per catch-up page of a stream (default `PAGE_EVENTS`). */
  pageEvents?: number
  /** The agent of this process, recorded in the owner markers it takes (session-owner.ts). */
  agent?: string
  /** How often the markers held are refreshed (default `OWNER_HEARTBEAT_MS`; tests set less). */
  heartbeatMs?: number
}

/** A stream's catch-up page: at most this many events and (from the segment) bytes, at least one event. */
const PAGE_EVENTS = 2048
const PAGE_MAX_BYTES = SEGMENT_PAGE_BYTES
/** Records per page of `readStored` (text is cheap to hold: the byte cap is what bounds it). */
const STORED_PAGE_EVENTS = 16384

/**
 * Directory names `scanSummaries` reports: a known prefix, then the id characters the SessionId
 * schema allows (looser than `isSessionId`: sessions written by other tools are runs too).
 */
const STORED_NAME_RE = /^(otter|ferret|mink)-[A-Za-z0-9_.:-]{1,120}$/
/** Summaries read at once by `scanSummaries`, and how many names it takes per batch. */
const SCAN_PARALLELISM = 64
const SCAN_BATCH = 1024

/**
 * `fs.readFile` with a callback: on Node 20 it reads ten thousand small files about 1.6 times
 * faster than `fs.promises.readFile` (measured on a 2-core machine: 0.56 s against 0.9 s), still
 * off the event loop.
 */
const readText = (path: string): Promise<string> =>
  new Promise((resolve, reject) => readFile(path, 'utf8', (err, text) => (err ? reject(err) : resolve(text))))

/** What this instance knows of a session's segment. */
interface SegmentState {
  /** Events 1..lines are in the segment, verified or written by this instance. */
  lines: number
  /** `ends[k]`: byte offset after the line of seq k + 1. */
  ends: number[]
  /** False after a failed write or read: the rest comes from the event files until reopened. */
  ok: boolean
  /** CRC-32 of the bytes of those lines (undefined: not known), for the checksum file. */
  crc?: number
}

/** The file-backed `EventStore`. */
export class FileEventStore implements EventStore {
  readonly root: string
  readonly #logger: Logger
  readonly #fsync: boolean
  readonly #pageEvents: number
  readonly #listeners: ListenerRegistry
  /** Last persisted seq of each session this instance has opened. */
  readonly #lastSeq = new Map<string, number>()
  readonly #queues = new Map<string, Promise<unknown>>()
  /**
   * Summary writes of each session, one after another: beside its appends for a session this
   * instance has open (summary.json is its own file, replaced atomically), not behind them.
   */
  readonly #summaryWrites = new Map<string, Promise<unknown>>()
  /** Sessions whose removal was asked for: a summary write not started yet finds the session gone. */
  readonly #removing = new Set<string>()
  /** Recent events of each session this instance has opened (resume without a directory read). */
  readonly #rings = new Map<string, RecentRing>()
  /** What the directory listings of sessions read here without the marker showed (listing-memo.ts). */
  readonly #listings = new ListingMemo()
  readonly #segments = new Map<string, SegmentState>()
  readonly #writers = new SegmentWriters()
  readonly #agent: string | undefined
  /**
   * The owner markers this store holds, by session: taken before a session's first write or
   * repair here, dropped when it is released or removed. A session is open here (`#lastSeq` has
   * it) only while its marker is held.
   */
  readonly #owned = new Map<string, SessionHolder>()
  /** How many times each session was opened here: a release asked for before a later open leaves it held. */
  readonly #opens = new Map<string, number>()
  readonly #heartbeatMs: number
  #beat: NodeJS.Timeout | undefined
  /** When each marker held here was last found this store's (taken, or a beat that found it). */
  readonly #confirmed = new Map<string, number>()

  constructor(opts: FileEventStoreOptions) {
    this.root = opts.root
    this.#agent = opts.agent
    this.#heartbeatMs = opts.heartbeatMs ?? OWNER_HEARTBEAT_MS
    this.#logger = opts.logger ?? noopLogger
    this.#fsync = opts.fsync ?? false
    this.#pageEvents = opts.pageEvents ?? PAGE_EVENTS
    this.#listeners = new ListenerRegistry(this.#logger)
  }

  async create(meta: SessionMeta, summary: SessionSummary): Promise<void> {
    validateMeta(meta)
    validateSummary(meta.session_id, summary)
    const id = meta.session_id
    const dir = sessionDir(this.root, id)
    const metaText = `${JSON.stringify(meta, null, 2)}\n`
    const summaryText = `${JSON.stringify(summary, null, 2)}\n`
    return this.#enqueue(id, async () => {
      if (!this.#fsync && eventFileThread.ready() && (await this.#createOnThread(id, dir, metaText, summaryText)))
        return
      try {
        await mkdir(dir)
      } catch (err) {
        if (errCode(err) === 'EEXIST') throw new ChimeraError('session_exists', `session ${id} already exists`)
        if (errCode(err) !== 'ENOENT') throw err
        // The event-log root itself is missing (first session, or removed): make it, then retry.
        await mkdir(this.root, { recursive: true })
        await mkdir(dir)
      }
      // Independent files, written side by side and created in place: the directory is new and
      // nobody else writes there. One that fails takes the directory with it: the session was
      // never acknowledged (a crash mid-write can leave one with no events).
      const written = await Promise.allSettled([
        writeExclusive(join(dir, 'session.json'), metaText, this.#fsync),
        writeExclusive(join(dir, 'summary.json'), summaryText, this.#fsync),
      ])
      const failed = written.find((r) => r.status === 'rejected')
      if (failed) {
        await unmake(dir)
        throw failed.reason
      }
      this.#created(id)
      // The owner marker, next in the session's queue: taken before any other operation of this
      // store on the session, after `session/new` is answered (nobody else knows the id yet).
      void this.#enqueue(id, () => this.#claimNew(id, dir))
    })
  }

  /**
   * Make a new session on the event-file thread, the owner marker too: one message each way
   * where the event loop makes about ten calls (each a wake-up of a pool thread). False when the
   * thread could not take it or the event-log root is missing: the event loop makes it then.
   */
  async #createOnThread(id: string, dir: string, metaText: string, summaryText: string): Promise<boolean> {
    await ownIdentity()
    const record = ownerRecord(this.#agent)
    let r
    const marker = freshOwner(dir, record)
    try {
      r = await eventFileThread.makeSession({
        dir,
        files: [
          { path: join(dir, 'session.json'), text: metaText },
          { path: join(dir, 'summary.json'), text: summaryText },
        ],
        marker,
      })
    } catch {
      return false
    }
    if (r.made) {
      // Made by this request, never acknowledged: removed again (a marker it took first).
      if (r.dirMade) await unmake(dir, { record, tmp: marker.tmp })
      if (errCode(r.made) === 'ENOENT') return false
      if (errCode(r.made) === 'EEXIST') throw new ChimeraError('session_exists', `session ${id} already exists`)
      throw r.made
    }
    this.#created(id)
    if (r.marker === true) this.#holding(id, record)
    // Not taken (another process linked one first, or it could not be written): as on the event
    // loop, the next step in the session's queue looks at who holds it.
    else void this.#enqueue(id, () => this.#claimNew(id, dir))
    return true
  }

  /** A session this store has just made: empty, open here. */
  #created(id: string): void {
    this.#lastSeq.set(id, 0)
    this.#rings.set(id, new RecentRing())
    this.#segments.set(id, { lines: 0, ends: [], ok: true, crc: 0 })
  }

  /**
   * Take the marker of a session just created here. Should another process have taken it first
   * (it found the new session listed and wrote it), or the marker not be written (a full disk),
   * the session is not open here: its next write takes the marker, or is refused.
   */
  async #claimNew(id: string, dir: string): Promise<void> {
    let other: SessionHolder | undefined
    try {
      other = await this.#claim(id, dir)
      if (!other) return
    } catch (err) {
      this.#logger.warn('event log: the owner marker of a new session was not taken', {
        session_id: id,
        error: String(err),
      })
    }
    if (other) this.#logger.warn('event log: a new session was taken by another process', { session_id: id })
    this.#lastSeq.delete(id)
    this.#segments.delete(id)
  }

  async append(event: AnyEvent): Promise<void> {
    const e = validateEvent(event)
    const id = e.session_id
    const dir = sessionDir(this.root, id)
    return this.#enqueue(id, async () => {
      const opens = this.#opens.get(id)
      const last = await this.#open(id, dir)
      this.#checkNext(id, e.seq, last, this.#opens.get(id) !== opens)
      let text: string
      let appended: Error | null | undefined
      try {
        // A single event counts towards starting the thread too (`ready`), and goes to it once it runs.
        const group = await this.#writeWithSegment(id, dir, [e], !this.#fsync && eventFileThread.ready())
        const written = group?.written[0]
        if (written?.status === 'rejected') throw written.reason
        text = written?.value ?? (await writeEventFile(dir, e, this.#fsync))
        appended = group?.appended
      } catch (err) {
        // EIO: the thread ended mid-write, and what it left may not have been removed: the next
        // write reads the log again (a torn file there is set aside) rather than trust the counter.
        if (errCode(err) === 'EIO') this.#lastSeq.delete(id)
        if (errCode(err) !== 'ENOENT') throw err
        this.#lastSeq.delete(id)
        throw sessionNotFound(id)
      }
      // The event file is the record: subscribers hear of it now; the segment line follows in
      // this same queued step (or came with it), so any later read of this session sees it.
      this.#lastSeq.set(id, e.seq)
      this.#ring(id).push(e, text.length)
      this.#listeners.notify(e)
      if (appended !== undefined) this.#segmentAppended(id, e.seq, [text], appended)
      else await this.#appendSegment(id, dir, e.seq, [text])
    })
  }

  /**
   * Consecutive events of one session as one group commit: their event files are created
   * (`writeEventFiles`: opened in turn, written and closed side by side; with fsync, one directory
   * sync for the group), then their segment lines in one write;
   * subscribers hear of them in order once every file of the group is written. On a failure the
   * files after the first that failed are removed again, so the log stays an exact prefix, and it
   * rejects with an `AppendGroupError` saying how many of the group are in the log.
   */
  async appendMany(events: readonly AnyEvent[]): Promise<void> {
    if (events.length === 0) return
    if (events.length === 1) return this.append(events[0]!)
    const checked = events.map((e) => validateEvent(e))
    const id = checked[0]!.session_id
    for (const e of checked)
      if (e.session_id !== id) throw new RangeError('appendMany: events of more than one session')
    const dir = sessionDir(this.root, id)
    return this.#enqueue(id, async () => {
      const opens = this.#opens.get(id)
      const last = await this.#open(id, dir)
      this.#checkNext(id, checked[0]!.seq, last, this.#opens.get(id) !== opens)
      checked.forEach((e, i) => checkNextSeq(id, e.seq, last + i))
      let group: GroupWritten | undefined
      try {
        group = await this.#writeWithSegment(id, dir, checked, eventFileThread.running())
        group ??= { written: await writeEventFiles(dir, checked, this.#fsync) }
      } catch (err) {
        // The group could not be sent to the event-file thread (none of it was written), or what
        // the thread did is unknown: the next write reads the log again rather than trust the counter.
        this.#lastSeq.delete(id)
        throw new AppendGroupError(0, err)
      }
      const written = group.written
      let committed = written.findIndex((r) => r.status === 'rejected')
      if (committed < 0) committed = written.length
      // Files after the first failure would leave a gap: take them back.
      const extra = checked.filter((_, i) => i > committed && written[i]!.status === 'fulfilled')
      await Promise.all(extra.map((e) => unlink(join(dir, eventFileName(e.seq, e.type))).catch(() => {})))
      if (this.#fsync && committed > 0) await syncDir(dir)
      const texts: string[] = []
      for (let i = 0; i < committed; i++) {
        const e = checked[i]!
        const text = (written[i] as PromiseFulfilledResult<string>).value
        texts.push(text)
        this.#lastSeq.set(id, e.seq)
        this.#ring(id).push(e, text.length)
        this.#listeners.notify(e)
      }
      if (committed > 0 && group.appended !== undefined)
        this.#segmentAppended(id, checked[0]!.seq, texts, group.appended)
      else if (committed > 0) await this.#appendSegment(id, dir, checked[0]!.seq, texts)
      if (committed < checked.length) {
        const cause = (written[committed] as PromiseRejectedResult).reason as unknown
        if (errCode(cause) === 'ENOENT') {
          this.#lastSeq.delete(id)
          throw new AppendGroupError(committed, sessionNotFound(id))
        }
        throw new AppendGroupError(committed, cause)
      }
    })
  }

  async read(sessionId: string, afterSeq = 0): Promise<AnyEvent[]> {
    return (await this.readPage(sessionId, afterSeq, Infinity)).events
  }

  /**
   * Events with `seq > afterSeq`: from the segment as far as it goes (one file read), then from
   * the event files (which also shows what another store instance appended). With a finite
   * `limit`, a page: at most `limit` events and `PAGE_MAX_BYTES` of segment (at least one
   * event), `more` when it stopped short of the end.
   */
  async readPage(
    sessionId: string,
    afterSeq: number,
    limit = this.#pageEvents,
  ): Promise<{ events: AnyEvent[]; more: boolean }> {
    const dir = sessionDir(this.root, sessionId)
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0)
      throw new RangeError(`afterSeq must be a non-negative integer, got ${afterSeq}`)
    return this.#enqueue(sessionId, async () => {
      // A session not open here (another process may hold it) is read as it is, from its event files.
      if (!this.#lastSeq.has(sessionId) && !(await readOwnMeta(dir, sessionId))) throw sessionNotFound(sessionId)
      let out: AnyEvent[] = []
      let cursor = afterSeq
      const seg = this.#segments.get(sessionId)
      if (seg?.ok && cursor < seg.lines) {
        const to = pageEnd(
          seg.ends,
          cursor,
          Math.min(seg.lines, cursor + limit),
          limit === Infinity ? Infinity : PAGE_MAX_BYTES,
        )
        const got = await readSegmentLines(dir, seg.ends, cursor + 1, to).catch(() => undefined)
        if (got) {
          out = got
          cursor = to
          if (to < seg.lines || out.length >= limit) return { events: out, more: true }
        } else {
          seg.ok = false
          this.#logger.warn('event log: segment unreadable; reading the event files until the session is reopened', {
            session_id: sessionId,
          })
        }
      }
      const left = limit - out.length
      // The directory as listed before (a session read without the marker): no event file after
      // the cursor, so no listing of it again.
      const listed = await this.#listings.current(sessionId, dir)
      if (listed && listed.last <= cursor && (cursor > 0 || listed.clean)) return { events: out, more: false }
      const scan = await scanLog(dir, sessionId, cursor, left)
      if (scan.reason !== undefined)
        this.#logger.warn('event log: read stopped at an invalid record', {
          session_id: sessionId,
          reason: scan.reason,
        })
      return { events: out.length === 0 ? scan.events : out.concat(scan.events), more: scan.events.length >= left }
    })
  }

  async readStored(
    sessionId: string,
    afterSeq: number,
    upTo: number,
  ): Promise<{ records: StoredRecord[]; more: boolean; release(): void } | undefined> {
    // Every event after the cursor is in memory (the stream of a session just begun, a resume from
    // a recent cursor): `stream` sends them from there at once, instead of after the writes queued
    // for the session and a read of its segment.
    if (this.#rings.get(sessionId)?.after(afterSeq)) return undefined
    const dir = sessionDir(this.root, sessionId)
    return this.#enqueue(sessionId, async () => {
      // Open here, or read here while nobody held it (its verified segment is kept).
      const seg = this.#segments.get(sessionId)
      const last = Math.min(seg?.lines ?? 0, upTo)
      if (!seg?.ok || afterSeq >= last) return undefined
      const to = pageEnd(seg.ends, afterSeq, Math.min(last, afterSeq + STORED_PAGE_EVENTS), PAGE_MAX_BYTES)
      const page = await readSegmentRecords(dir, sessionId, seg.ends, afterSeq + 1, to).catch(() => undefined)
      // Not the lines this instance verified: the event path reads them (and marks the segment).
      if (!page) return undefined
      return { records: page.records, release: page.release, more: to < last }
    })
  }

  async readVouched(sessionId: string): Promise<VouchedRecords | undefined> {
    if (!isSessionId(sessionId)) return undefined
    // After what is queued (the checksum of a session just released is being written).
    return this.#enqueue(sessionId, () => this.#vouched(sessionId))
  }

  async #vouched(sessionId: string): Promise<VouchedRecords | undefined> {
    // Held open (or read) here: the verified segment is read as it is (`readStored`).
    if (this.#lastSeq.has(sessionId) || this.#segments.has(sessionId)) return undefined
    const dir = sessionDir(this.root, sessionId)
    if (!(await readOwnMeta(dir, sessionId))) return undefined
    const seg = await readVouchedSegment(dir)
    if (!seg) return undefined
    const lines = seg.ends.length
    return {
      lines,
      more: seg.more,
      page: (afterSeq) =>
        afterSeq >= lines
          ? Promise.resolve(undefined)
          : readVouchedPage(dir, seg, sessionId, afterSeq).catch(() => undefined),
    }
  }

  async queuePrompt(sessionId: string, prompt: QueuedPrompt): Promise<void> {
    const dir = sessionDir(this.root, sessionId)
    return this.#enqueue(sessionId, async () => {
      await this.#open(sessionId, dir)
      await writeQueued(dir, prompt, this.#fsync)
    })
  }

  async unqueuePrompt(sessionId: string, messageId: string): Promise<void> {
    const dir = sessionDir(this.root, sessionId)
    return this.#enqueue(sessionId, async () => {
      await this.#open(sessionId, dir)
      await removeQueued(dir, messageId)
    })
  }

  async writeSummary(sessionId: string, summary: SessionSummary): Promise<void> {
    const dir = sessionDir(this.root, sessionId)
    validateSummary(sessionId, summary)
    const write = (): Promise<void> => writeJsonAtomic(join(dir, 'summary.json'), summary, this.#fsync)
    // In order with the session's other summary writes; a session this instance has not opened
    // goes through its queue, which opens (and repairs) it first.
    return chain(this.#summaryWrites, sessionId, () => {
      if (this.#removing.has(sessionId)) return Promise.reject(sessionNotFound(sessionId))
      if (this.#lastSeq.has(sessionId) && !this.#lapsed(sessionId)) return write()
      return this.#enqueue(sessionId, async () => {
        await this.#open(sessionId, dir)
        await write()
      })
    })
  }

  async load(sessionId: string): Promise<LoadedSession | undefined> {
    const dir = sessionDir(this.root, sessionId)
    return this.#enqueue(sessionId, () => this.#recover(sessionId, dir, false))
  }

  async list(filter: ListFilter = {}): Promise<SessionSummary[]> {
    return applyListFilter(await this.#listed(filter), filter)
  }

  async listPage(query: PageQuery = {}): Promise<SessionPage> {
    return pageOf(await this.#listed(query), query)
  }

  async *scanSummaries(opts: { agents?: AgentPrefix[] } = {}): AsyncIterable<StoredSummary> {
    const agents = opts.agents ?? AGENT_PREFIXES
    const names = (await this.#names()).filter((n) => {
      const m = STORED_NAME_RE.exec(n)
      return m !== null && agents.includes(m[1] as AgentPrefix)
    })
    for (let i = 0; i < names.length; i += SCAN_BATCH) {
      const batch = await mapLimit(names.slice(i, i + SCAN_BATCH), SCAN_PARALLELISM, async (name) => {
        let summary: unknown
        try {
          summary = JSON.parse(await readText(join(this.root, name, 'summary.json')))
        } catch {
          summary = undefined
        }
        return { session_id: name, summary }
      })
      yield* batch
    }
  }

  async readSession(sessionId: string): Promise<StoredSession | undefined> {
    if (!isSessionId(sessionId)) return undefined
    const dir = join(this.root, sessionId)
    const meta = await readOwnMeta(dir, sessionId)
    if (!meta) return undefined
    return (await readAsItIs(dir, meta)).stored
  }

  /** The entries of the event-log root; none when it does not exist. */
  async #names(): Promise<string[]> {
    try {
      return await readdir(this.root)
    } catch (err) {
      if (errCode(err) === 'ENOENT') return []
      throw err
    }
  }

  /** The summaries `list` and `listPage` order and cut: valid ids of the filter's agents. */
  async #listed(filter: ListFilter): Promise<SessionSummary[]> {
    const ids = (await this.#names()).filter((n) => isSessionId(n) && agentAllowed(n, filter))
    const found = await mapLimit(ids, 16, (id) => this.#summaryForList(id))
    return found.filter((s): s is SessionSummary => s !== undefined)
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    checkSessionId(sessionId)
    return this.#listeners.add(sessionId, listener)
  }

  stream(sessionId: string, opts: StreamOptions = {}): AsyncIterable<AnyEvent> {
    checkSessionId(sessionId)
    return streamEvents(
      {
        subscribe: (id, l) => this.subscribe(id, l),
        read: (id, after) => this.readPage(id, after),
        // The ring holds exactly the persisted tail; later events reach the stream's subscription.
        // A session this instance knows has no events yet needs no read at all.
        recent: (id, after) => (this.#lastSeq.get(id) === 0 ? [] : this.#rings.get(id)?.after(after)),
      },
      sessionId,
      opts,
    )
  }

  /**
   * Drop what this instance keeps in memory for a session that is no longer live, and its owner
   * marker: at once when nothing is queued for it, else once what is queued has run (unless the
   * session was opened again meanwhile).
   */
  release(sessionId: string): void {
    if (!this.#queues.has(sessionId) && !this.#summaryWrites.has(sessionId)) return this.#letGo(sessionId)
    const opened = this.#opens.get(sessionId)
    void this.#enqueue(sessionId, async () => {
      await this.#summaryWrites.get(sessionId)?.catch(() => {})
      if (this.#opens.get(sessionId) === opened) this.#letGo(sessionId)
    })
  }

  #letGo(sessionId: string): void {
    const seg = this.#segments.get(sessionId)
    const dir = sessionDir(this.root, sessionId)
    // What this instance verified or wrote of the segment, for a replay that need not open the
    // session (readVouched); after everything queued, so a removal that is queued wins.
    // A session only read here (nobody held it then, its segment was the whole log) gets one too,
    // unless another process holds it now: the checksum vouches for a prefix, which a reader
    // verifies (its CRC) before use, so one written as another process takes the session is
    // still true or not used.
    const read = !this.#lastSeq.has(sessionId) && !this.#owned.has(sessionId)
    if (seg?.ok && seg.crc !== undefined && seg.lines > 0 && (read || seg.lines === this.#lastSeq.get(sessionId))) {
      const sum = { lines: seg.lines, bytes: seg.ends.at(-1)!, crc32: seg.crc }
      void this.#enqueue(sessionId, async () => {
        if (read && (await liveOwner(dir).catch(() => undefined))) return
        await writeSegmentSum(dir, sum).catch((err: unknown) => {
          if (errCode(err) !== 'ENOENT')
            this.#logger.warn('event log: segment checksum not written', { session_id: sessionId, error: String(err) })
        })
      })
    }
    this.#rings.delete(sessionId)
    this.#lastSeq.delete(sessionId)
    this.#segments.delete(sessionId)
    this.#listings.forget(sessionId)
    void this.#writers.close(dir)
    // After the checksum: the next holder finds it written.
    if (this.#owned.has(sessionId)) void this.#enqueue(sessionId, () => this.#disown(sessionId))
  }

  holdsMarker(sessionId: string): boolean {
    return this.#owned.has(sessionId)
  }

  async changedElsewhere(sessionId: string, lastSeq: number): Promise<boolean> {
    if (this.#owned.has(sessionId)) return false
    const dir = sessionDir(this.root, sessionId)
    try {
      if (await liveOwner(dir)) return true
      let listed = await this.#listings.current(sessionId, dir)
      if (!listed) {
        const stamp = await dirStamp(dir)
        const { entries, misnamed } = logEntries(await readdir(dir))
        listed = listingFacts(entries, misnamed)
        this.#listings.record(sessionId, stamp, listed)
      }
      return listed.events !== lastSeq || !listed.clean
    } catch {
      return true
    }
  }

  /**
   * `checkNextSeq`, and when the write that just opened the session (`opened`: it was not open
   * before) does not follow its log, the writer's copy was read before another process wrote:
   * the session is let go again at once, so the copy is read again before its next use.
   */
  #checkNext(sessionId: string, seq: number, last: number, opened: boolean): void {
    if (seq !== last + 1 && opened) this.#letGo(sessionId)
    checkNextSeq(sessionId, seq, last)
  }

  /** Drop the owner marker of a session not open here (again). */
  async #disown(sessionId: string): Promise<void> {
    const held = this.#owned.get(sessionId)
    if (!held || this.#lastSeq.has(sessionId)) return
    // Forgotten once dropped: a close meanwhile (queued after this) finds nothing left to drop.
    await dropOwner(sessionDir(this.root, sessionId), held)
    this.#unheld(sessionId)
  }

  /**
   * Take the owner marker of `sessionId` (in `dir`, which must exist) unless held here already:
   * undefined when this store holds it, else the live process that does. Once per session
   * opened, not per event.
   */
  async #claim(sessionId: string, dir: string): Promise<SessionHolder | undefined> {
    if (this.#owned.has(sessionId)) return undefined
    await ownIdentity()
    const record = ownerRecord(this.#agent)
    const other = await takeOwner(dir, record)
    if (!other) this.#holding(sessionId, record)
    return other
  }

  /** The marker of `sessionId` is `record`'s now: kept fresh until it is dropped. */
  #holding(sessionId: string, record: SessionHolder): void {
    this.#owned.set(sessionId, record)
    this.#confirmed.set(sessionId, Date.now())
    this.#beat ??= setInterval(() => this.#heartbeat(), this.#heartbeatMs).unref()
  }

  /** Forget a marker held here (the heartbeat stops with the last). */
  #unheld(sessionId: string): void {
    this.#owned.delete(sessionId)
    this.#confirmed.delete(sessionId)
    if (this.#owned.size === 0 && this.#beat) {
      clearInterval(this.#beat)
      this.#beat = undefined
    }
  }

  /**
   * Refresh every marker held here (session-owner.ts: one not refreshed for `OWNER_STALE_MS` is
   * stale). A marker found to be another's (this process was stopped or stalled past the window
   * and the session taken over) is no longer held: the next write here opens the session again,
   * which answers `session_busy`.
   */
  #heartbeat(): void {
    for (const [id, record] of this.#owned)
      void this.#enqueue(id, async () => {
        if (this.#owned.get(id) === record) await this.#beatOne(id, record)
      })
  }

  /**
   * One beat of the marker `record` of `sessionId`: its time is set, then it is read; still this
   * store's, it is confirmed, else the session is no longer open here. In this order a taker
   * that judged it stale before the beat finds it changed under its guard and leaves it
   * (lock-file.ts), and one that moved it aside first has it (this store finds the marker gone
   * or another's).
   */
  async #beatOne(sessionId: string, record: SessionHolder): Promise<void> {
    const dir = sessionDir(this.root, sessionId)
    const now = Date.now()
    const at = new Date(now)
    await utimes(join(dir, OWNER_FILE), at, at).catch(() => {})
    if ((await readOwnerAsync(dir))?.token === record.token) {
      this.#confirmed.set(sessionId, now)
      return
    }
    this.#logger.warn('event log: this process no longer holds the session (taken over while it did not answer)', {
      session_id: sessionId,
    })
    this.#unheld(sessionId)
    this.#lastSeq.delete(sessionId)
    this.#segments.delete(sessionId)
    // Its recent events are another process's to add to now: a stream reads the log instead.
    this.#rings.delete(sessionId)
  }

  /**
   * True when the marker of a session open here was not confirmed for a beat and a half: the
   * event loop was blocked or the process stopped, and another process may have judged the
   * marker stale and taken the session over. The next write confirms it first (`#open`).
   */
  #lapsed(sessionId: string): boolean {
    const at = this.#confirmed.get(sessionId)
    return at !== undefined && Date.now() - at > this.#heartbeatMs * 1.5
  }

  /** Before a write: a marker whose beat lapsed is confirmed first (it may have been taken over). */
  async #confirmIfLapsed(sessionId: string): Promise<void> {
    const held = this.#owned.get(sessionId)
    if (held && this.#lapsed(sessionId)) await this.#beatOne(sessionId, held)
  }

  /**
   * Close the segment append handles this instance holds (at most 64, one per session appended to
   * lately), each after its pending write. The store stays usable: a later append opens its
   * segment again. For an owner that drops the store (a manager shutting down, a test).
   */
  async close(): Promise<void> {
    // After what is queued (a new session's marker may be being taken).
    await Promise.all([...this.#queues.keys()].map((id) => this.#enqueue(id, () => Promise.resolve())))
    await this.#writers.closeAll()
    // The sessions are no longer served here: their markers go (after what is queued for each).
    await Promise.all(
      [...this.#owned.keys()].map((id) =>
        this.#enqueue(id, async () => {
          const held = this.#owned.get(id)
          if (!held) return
          this.#unheld(id)
          this.#lastSeq.delete(id)
          await dropOwner(sessionDir(this.root, id), held)
        }),
      ),
    )
  }

  async remove(sessionId: string): Promise<void> {
    const dir = sessionDir(this.root, sessionId)
    // Summary writes not started yet find the session gone; those under way end before the removal.
    this.#removing.add(sessionId)
    return this.#enqueue(sessionId, async () => {
      try {
        await this.#summaryWrites.get(sessionId)?.catch(() => {})
        await this.#confirmIfLapsed(sessionId)
        // Only the holder removes a session: one another process holds is refused.
        if (!this.#lastSeq.has(sessionId) && (await readOwnMeta(dir, sessionId))) {
          const other = await this.#claimIfThere(sessionId, dir)
          if (other) throw sessionHeld(sessionId, other)
        }
        await this.#writers.close(dir)
        // Nothing of this store writes here any more: its writes of the session are queued before
        // this one (or find it gone), and its summary writes are awaited above. Another process
        // sharing the home may still be taking the session's marker (a write it was asked for):
        // rm's retries remove what that puts in the directory meanwhile (ENOTEMPTY), and its own
        // write then finds the session gone.
        await rm(dir, { recursive: true, force: true, maxRetries: 5 })
        this.#lastSeq.delete(sessionId)
        this.#rings.delete(sessionId)
        this.#segments.delete(sessionId)
        this.#listings.forget(sessionId)
        this.#unheld(sessionId)
      } finally {
        this.#removing.delete(sessionId)
      }
    })
  }

  #ring(sessionId: string): RecentRing {
    let r = this.#rings.get(sessionId)
    if (!r) this.#rings.set(sessionId, (r = new RecentRing()))
    return r
  }

  /** Run `fn` after everything already queued for `sessionId`. */
  #enqueue<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    return chain(this.#queues, sessionId, fn)
  }

  /**
   * The last seq of a session, for a write: the first time, its owner marker is taken and its log
   * scanned (and repaired); `session_busy` when another live process holds it.
   */
  async #open(sessionId: string, dir: string): Promise<number> {
    await this.#confirmIfLapsed(sessionId)
    const known = this.#lastSeq.get(sessionId)
    if (known !== undefined) return known
    const loaded = await this.#recover(sessionId, dir, true)
    if (!loaded) throw sessionNotFound(sessionId)
    return loaded.events.length
  }

  /** `#claim` where the directory may be gone: undefined then too (nothing to hold). */
  async #claimIfThere(sessionId: string, dir: string): Promise<SessionHolder | undefined> {
    try {
      return await this.#claim(sessionId, dir)
    } catch (err) {
      if (errCode(err) === 'ENOENT') return undefined
      throw err
    }
  }

  /**
   * Rebuild a session from disk, quarantining a bad tail; undefined when there is no session.
   * For a write, the owner marker is taken first (`session_busy` when another live process holds
   * it). A load takes it only to recover (a bad tail to quarantine, queued prompts to run, a
   * summary to rebuild, the segment to cut or grow): a session read as it is needs no marker, so a process that only shows a
   * session never keeps another from writing it. One another live process holds is read as it
   * is (`heldBy`, nothing repaired).
   */
  async #recover(sessionId: string, dir: string, forWrite: boolean): Promise<LoadedSession | undefined> {
    const metaRead = await readJsonFile(join(dir, 'session.json'))
    if (metaRead.kind !== 'ok') {
      this.#lastSeq.delete(sessionId)
      if (metaRead.kind === 'bad' || (await exists(dir))) {
        this.#logger.warn('event log: session without a readable session.json is treated as absent', {
          session_id: sessionId,
          reason: metaRead.kind === 'bad' ? metaRead.reason : 'missing',
        })
      }
      return undefined
    }
    const problem =
      metaProblem(metaRead.value) ??
      ((metaRead.value as SessionMeta).session_id !== sessionId ? 'session_id does not match its directory' : undefined)
    if (problem !== undefined) {
      this.#lastSeq.delete(sessionId)
      this.#logger.warn('event log: invalid session.json; session treated as absent', {
        session_id: sessionId,
        reason: problem,
      })
      return undefined
    }
    const meta = metaRead.value as SessionMeta
    if (!forWrite && !this.#owned.has(sessionId)) {
      let seen: LoadedSession | 'recover' | undefined
      try {
        seen = await this.#readOnly(dir, meta)
      } catch (err) {
        if (errCode(err) !== 'ENOENT') throw err
        return undefined
      }
      if (seen !== 'recover') return seen
    }
    let holder: SessionHolder | undefined
    try {
      holder = await this.#claim(sessionId, dir)
    } catch (err) {
      if (errCode(err) !== 'ENOENT') throw err
      return undefined
    }
    if (holder) {
      if (forWrite) throw sessionHeld(sessionId, holder)
      return { ...(await readAsItIs(dir, meta)).stored, queued: [], repaired: false, heldBy: holder }
    }
    this.#opens.set(sessionId, (this.#opens.get(sessionId) ?? 0) + 1)
    // The checksum a release left vouches for the log as it was then: once the session is open
    // here it may grow past it, or its segment stop following it (a failed segment write, a
    // repair), so it goes now and is written again when this instance lets the session go.
    await unlink(join(dir, SUM_FILE)).catch(() => {})
    // The segment's verified prefix stands in for reading those event files; the files after
    // it (and any duplicate or gap) are checked one by one, as without a segment.
    // One directory listing serves the log and the queued prompts.
    const listing = await readdir(dir)
    const { entries, misnamed } = logEntries(listing)
    const seg = await readSegment(dir, sessionId, entries)
    const verified = seg.events.length
    const rest = await scanEntries(dir, sessionId, entries.slice(verified), verified)
    const events = verified === 0 ? rest.events : rest.events.length === 0 ? seg.events : seg.events.concat(rest.events)
    const tail = [...rest.tail, ...misnamed]
    const reason = rest.reason ?? (misnamed.length > 0 ? `misnamed event files: ${misnamed.join(', ')}` : undefined)
    const repaired = tail.length > 0
    if (repaired) {
      try {
        const where = await quarantine(dir, tail)
        this.#logger.warn('event log repaired: bad tail quarantined', {
          session_id: sessionId,
          reason,
          files: tail,
          quarantine: where,
        })
      } catch (err) {
        this.#logger.error('event log: could not quarantine bad tail', {
          session_id: sessionId,
          reason,
          files: tail,
          error: String(err),
        })
      }
    }
    this.#lastSeq.set(sessionId, events.length)
    await this.#syncSegment(sessionId, dir, seg.ends, seg.size, rest.texts, seg.reason, seg.crc)
    const ring = this.#ring(sessionId)
    ring.clear()
    for (const e of events.slice(-ring.capacity)) ring.push(e, JSON.stringify(e).length + 1)
    const queued = await readQueued(dir, sessionId, this.#logger, listing)
    return { meta, summary: await this.#summaryOrRebuild(dir, meta, events.length), events, queued, repaired }
  }

  /**
   * A load without the marker: the session as it is, held by another live process (`heldBy`) or
   * by nobody; 'recover' when nobody holds it and it needs a write to be loaded (see `#recover`).
   */
  async #readOnly(dir: string, meta: SessionMeta): Promise<LoadedSession | 'recover'> {
    const heldBy = await liveOwner(dir)
    const seen = await readAsItIs(dir, meta)
    if (!heldBy && seen.needsWrite) return 'recover'
    // Nobody holds it and its segment is the whole log: a replay reads that (readStored) until
    // it is let go. The lines verified stay valid: a log only grows while nobody repairs it, and
    // it needed no repair.
    if (!heldBy) {
      this.#segments.set(meta.session_id, seen.segment)
      this.#listings.record(meta.session_id, seen.listed.stamp, seen.listed.facts)
    }
    return { ...seen.stored, queued: [], repaired: false, ...(heldBy ? { heldBy } : {}) }
  }

  /** Make the segment exactly the log: cut what disagrees, append the records read from files. */
  async #syncSegment(
    sessionId: string,
    dir: string,
    ends: number[],
    size: number,
    texts: string[],
    reason: string | undefined,
    crc: number | undefined,
  ): Promise<void> {
    await this.#writers.close(dir)
    const state: SegmentState = { lines: ends.length, ends, ok: true, ...(crc === undefined ? {} : { crc }) }
    this.#segments.set(sessionId, state)
    const keep = ends.at(-1) ?? 0
    if (size === keep && texts.length === 0) return
    if (reason !== undefined)
      this.#logger.info('event log: segment cut where it disagrees with the event files; rebuilding from them', {
        session_id: sessionId,
        reason,
      })
    try {
      const more = await rewriteSegmentTail(dir, keep, texts)
      for (const end of more) ends.push(end)
      state.lines = ends.length
      for (const t of texts) if (state.crc !== undefined) state.crc = crc32(t, state.crc)
    } catch (err) {
      state.ok = false
      this.#logger.warn('event log: could not rebuild the segment; reading event files', {
        session_id: sessionId,
        error: String(err),
      })
    }
  }

  /**
   * Consecutive events' files and their segment lines in one request to the event-file thread
   * (decision 0503), when `threaded` (the thread runs), the store does not sync and the segment
   * follows the log up to the first of them. Undefined when not, or when nothing was written (the
   * segment would not open, the request never reached the thread): the caller writes them the usual
   * way. Rejects when what the thread did is unknown.
   */
  async #writeWithSegment(
    id: string,
    dir: string,
    events: readonly AnyEvent[],
    threaded: boolean,
  ): Promise<GroupWritten | undefined> {
    if (!threaded || this.#fsync || !this.#segmentFollows(id, events[0]!.seq)) return undefined
    let sent = false
    return this.#writers
      .lend(
        dir,
        (fd) => {
          sent = true
          return writeOnThread(dir, events, fd)
        },
        (r) => r.appended instanceof Error,
      )
      .catch((err: unknown) => {
        if (!sent || err instanceof NotSentError) return undefined
        // What is on disk is unknown: the next write reads the log again rather than trust the counter.
        this.#lastSeq.delete(id)
        throw err
      })
  }

  /** Whether the records of events from `seq` on would continue the segment (it follows the log to `seq - 1`). */
  #segmentFollows(sessionId: string, seq: number): boolean {
    const state = this.#segments.get(sessionId)
    return state !== undefined && state.ok && state.lines === seq - 1
  }

  /** Append the records of events `seq`, `seq + 1`, … to the segment (one write) when they follow its last line. */
  async #appendSegment(sessionId: string, dir: string, seq: number, texts: readonly string[]): Promise<void> {
    if (!this.#segmentFollows(sessionId, seq)) return
    let failure: unknown = null
    await this.#writers.append(dir, texts.length === 1 ? texts[0]! : texts.join('')).catch((err: unknown) => {
      failure = err
    })
    this.#segmentAppended(sessionId, seq, texts, failure)
  }

  /**
   * The records of events `seq`, `seq + 1`, … were appended to the segment (`failure` null) or not:
   * what this instance knows of it follows (or stops trusting it until the session is opened again).
   */
  #segmentAppended(sessionId: string, seq: number, texts: readonly string[], failure: unknown): void {
    const state = this.#segments.get(sessionId)
    if (!state?.ok || state.lines !== seq - 1) return
    if (failure !== null) {
      // The events are on disk; only the shortcut is lost until the session is opened again.
      state.ok = false
      this.#logger.warn('event log: segment append failed; reading event files', {
        session_id: sessionId,
        error: String(failure),
      })
      return
    }
    let end = state.ends.at(-1) ?? 0
    for (const t of texts) {
      state.ends.push((end += Buffer.byteLength(t)))
      if (state.crc !== undefined) state.crc = crc32(t, state.crc)
    }
    state.lines = seq + texts.length - 1
  }

  /** `summary.json`, or a minimal one rebuilt from meta (and written back) when it is damaged. */
  async #summaryOrRebuild(dir: string, meta: SessionMeta, eventCount: number): Promise<SessionSummary> {
    const r = await readJsonFile(join(dir, 'summary.json'))
    let reason = r.kind === 'bad' ? r.reason : 'missing'
    if (r.kind === 'ok') {
      try {
        return validateSummary(meta.session_id, r.value)
      } catch (err) {
        reason = (err as Error).message
      }
    }
    const summary = minimalSummary(meta, eventCount)
    this.#logger.warn('event log: summary.json rebuilt from session.json', { session_id: meta.session_id, reason })
    await writeJsonAtomic(join(dir, 'summary.json'), summary, this.#fsync).catch((err: unknown) =>
      this.#logger.error('event log: could not write rebuilt summary', {
        session_id: meta.session_id,
        error: String(err),
      }),
    )
    return summary
  }

  /** A session's summary for `list`: `summary.json`, else from meta; undefined (logged) if neither. */
  async #summaryForList(sessionId: string): Promise<SessionSummary | undefined> {
    const dir = join(this.root, sessionId)
    try {
      const r = await readJsonFile(join(dir, 'summary.json'))
      if (r.kind === 'ok') {
        try {
          return validateSummary(sessionId, r.value)
        } catch {
          // fall back to meta below
        }
      }
      const m = await readJsonFile(join(dir, 'session.json'))
      if (m.kind === 'ok' && metaProblem(m.value) === undefined && (m.value as SessionMeta).session_id === sessionId)
        return minimalSummary(m.value as SessionMeta)
      this.#logger.warn('event log: skipping unreadable session directory', { session_id: sessionId })
    } catch (err) {
      this.#logger.warn('event log: skipping unreadable session directory', {
        session_id: sessionId,
        error: String(err),
      })
    }
    return undefined
  }
}

/**
 * The last counter of a page after `cursor`: at most `to`, within `maxBytes` of the segment
 * (but at least one event).
 */
function pageEnd(ends: readonly number[], cursor: number, to: number, maxBytes: number): number {
  if (maxBytes === Infinity) return to
  const start = cursor === 0 ? 0 : ends[cursor - 1]!
  let lo = cursor + 1
  let hi = to
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (ends[mid - 1]! - start <= maxBytes) lo = mid
    else hi = mid - 1
  }
  return lo
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

/**
 * A session as it is on disk, changing nothing: the segment's prefix that agrees with the event
 * files, then the event files after it up to the first bad record (left where it is); the
 * summary, or one made from the meta (not written back). `needsWrite`: loading it for use
 * would write (a bad tail or misnamed files to quarantine, queued prompts, a summary to rebuild,
 * a segment to cut or grow).
 */
async function readAsItIs(
  dir: string,
  meta: SessionMeta,
): Promise<{
  stored: StoredSession
  needsWrite: boolean
  segment: SegmentState
  /** What the listing read showed, and the directory's stamp before it. */
  listed: { stamp: DirStamp; facts: ListingFacts }
}> {
  const sessionId = meta.session_id
  const stamp = await dirStamp(dir)
  const listing = await readdir(dir)
  const { entries, misnamed } = logEntries(listing)
  const seg = await readSegment(dir, sessionId, entries)
  const verified = seg.events.length
  const rest = await scanEntries(dir, sessionId, entries.slice(verified), verified)
  const events = verified === 0 ? rest.events : seg.events.concat(rest.events)
  const s = await readJsonFile(join(dir, 'summary.json'))
  let summary: SessionSummary
  let rebuilt = false
  try {
    summary = validateSummary(sessionId, s.kind === 'ok' ? s.value : undefined)
  } catch {
    summary = minimalSummary(meta, events.length)
    rebuilt = true
  }
  // The segment is cut where it disagrees, or grown by the event files after it, on an open.
  const segmentOff = seg.size !== (seg.ends.at(-1) ?? 0) || rest.texts.length > 0
  const needsWrite = rest.tail.length > 0 || misnamed.length > 0 || hasQueued(listing) || rebuilt || segmentOff
  const segment = {
    lines: seg.ends.length,
    ends: seg.ends,
    ok: true,
    ...(seg.crc === undefined ? {} : { crc: seg.crc }),
  }
  return {
    stored: { meta, summary, events },
    needsWrite,
    segment,
    listed: { stamp, facts: listingFacts(entries, misnamed) },
  }
}

/** What a session directory's listing (`logEntries` of it) shows of its log (listing-memo.ts). */
function listingFacts(entries: readonly LogEntry[], misnamed: readonly string[]): ListingFacts {
  return { events: entries.length, last: entries.at(-1)?.seq ?? 0, clean: misnamed.length === 0 }
}

/** The session's `session.json` when it is a valid meta of this very session; else undefined. */
async function readOwnMeta(dir: string, sessionId: string): Promise<SessionMeta | undefined> {
  const r = await readJsonFile(join(dir, 'session.json'))
  if (r.kind !== 'ok' || metaProblem(r.value) !== undefined) return undefined
  const meta = r.value as SessionMeta
  return meta.session_id === sessionId ? meta : undefined
}

/**
 * Run `fn` after what `chains` holds for `key` (settled either way), and hold its run there until
 * it settles (the entry is dropped then, unless a later run took its place).
 */
function chain<T>(chains: Map<string, Promise<unknown>>, key: string, fn: () => Promise<T>): Promise<T> {
  const prev = chains.get(key) ?? Promise.resolve()
  const run = prev.then(fn, fn)
  chains.set(key, run)
  const done = (): void => {
    if (chains.get(key) === run) chains.delete(key)
  }
  run.then(done, done)
  return run
}

/**
 * Remove what a create made of a session directory and did not finish (never acknowledged:
 * nobody else knows its id): its two files, the owner marker when `marker.record` holds it (and
 * its temporary file), then the directory if nothing else is in it. Best effort: what stays is a
 * session with no events.
 */
async function unmake(dir: string, marker?: { record: SessionHolder; tmp: string }): Promise<void> {
  const gone = (path: string) => unlink(path).catch(() => {})
  await Promise.all([gone(join(dir, 'session.json')), gone(join(dir, 'summary.json'))])
  if (marker) await Promise.all([dropOwner(dir, marker.record).catch(() => {}), gone(marker.tmp)])
  await rmdir(dir).catch(() => {})
}
