/**
 * How sessions are listed, by every store and every surface (`GET /sessions`, ACP `session/list`
 * of both dialects, `chimera otter sessions list`): which summaries pass a `ListFilter`, the
 * newest-first order (by `started_at`, falling back to `created_at` and then to the instant
 * encoded in the session id; ties by id, descending), the opaque page cursor, and
 * `listSessions`, the one function that merges a store's rows with the live sessions of a
 * manager.
 */
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import { ChimeraError } from '../errors.ts'
import { AGENT_PREFIXES, agentOf, sessionIdTime } from './paths.ts'
import type { EventStore, ListFilter, PageQuery, SessionPage } from './types.ts'

/** When a session started, in ms since the epoch (NaN when nothing says). */
export function startedMs(s: SessionSummary): number {
  if (s.started_at !== undefined) {
    const ms = Date.parse(s.started_at)
    if (Number.isFinite(ms)) return ms
  }
  if (s.created_at !== undefined && Number.isFinite(s.created_at)) return s.created_at * 1000
  return sessionIdTime(s.session_id) ?? Number.NaN
}

/** True when the session's directory prefix is one of `filter.agents` (default: all). */
export function agentAllowed(sessionId: string, filter: ListFilter = {}): boolean {
  const agent = agentOf(sessionId)
  return agent !== undefined && (filter.agents ?? AGENT_PREFIXES).includes(agent)
}

/** True when `s` passes every filter but `limit`. */
export function matchesFilter(s: SessionSummary, filter: ListFilter = {}): boolean {
  if (!agentAllowed(s.session_id, filter)) return false
  if (filter.since !== undefined) {
    const started = startedMs(s)
    if (!(started >= filter.since.getTime())) return false
  }
  if (filter.model !== undefined && s.model !== filter.model) return false
  const needle = filter.modelContains
  if (needle !== undefined && needle.toLowerCase() !== 'all') {
    if (s.model === undefined || !s.model.toLowerCase().includes(needle.toLowerCase())) return false
  }
  if (filter.cwd !== undefined && s.working_dir !== filter.cwd) return false
  return true
}

/** A row's place in the listing order: its start (-Infinity when unknown) and its id. */
interface ListKey {
  t: number
  id: string
}

const keyOf = (s: SessionSummary): ListKey => {
  const t = startedMs(s)
  return { t: Number.isNaN(t) ? -Infinity : t, id: s.session_id }
}

/** Negative when `a` is listed before `b`: newest first, ties by id descending. */
function compareKeys(a: ListKey, b: ListKey): number {
  if (a.t !== b.t) return b.t > a.t ? 1 : -1
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}

/** Negative when `a` is listed before `b` (the listing order). */
export const compareListed = (a: SessionSummary, b: SessionSummary): number => compareKeys(keyOf(a), keyOf(b))

/** The cursor naming `s`'s place: a page from it starts with the row after `s`. */
export function encodeCursor(s: SessionSummary): string {
  const k = keyOf(s)
  return Buffer.from(JSON.stringify([Number.isFinite(k.t) ? k.t : null, k.id])).toString('base64url')
}

/** The place a cursor names; a `ChimeraError` `invalid_cursor` when it is not one of ours. */
export function decodeCursor(cursor: string): ListKey {
  let v: unknown
  try {
    v =
      cursor.length <= 1024 && /^[A-Za-z0-9_-]+$/.test(cursor)
        ? JSON.parse(Buffer.from(cursor, 'base64url').toString())
        : undefined
  } catch {
    v = undefined
  }
  if (
    Array.isArray(v) &&
    v.length === 2 &&
    (v[0] === null || (typeof v[0] === 'number' && Number.isFinite(v[0]))) &&
    typeof v[1] === 'string' &&
    v[1].length > 0 &&
    v[1].length <= 200
  )
    return { t: v[0] === null ? -Infinity : v[0], id: v[1] }
  throw new ChimeraError('invalid_cursor', 'unknown cursor', {
    detail: [{ path: 'cursor', message: 'unknown cursor' }],
  })
}

const limitOf = (limit: number | undefined): number => (limit === undefined ? Infinity : Math.max(0, Math.floor(limit)))

/**
 * The page of `summaries` a query asks for: those passing the filter, in the listing order,
 * after the cursor, at most `limit`, with `nextCursor` when more follow.
 */
export function pageOf(summaries: readonly SessionSummary[], query: PageQuery = {}): SessionPage {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  const keyed = summaries
    .filter((s) => matchesFilter(s, query))
    .map((s) => ({ s, k: keyOf(s) }))
    .filter((r) => after === undefined || compareKeys(after, r.k) < 0)
  keyed.sort((a, b) => compareKeys(a.k, b.k))
  const limit = limitOf(query.limit)
  const rows = keyed.slice(0, limit).map((r) => r.s)
  return keyed.length > limit && rows.length > 0
    ? { sessions: rows, nextCursor: encodeCursor(rows.at(-1)!) }
    : { sessions: rows }
}

/** Filter, sort into the listing order and cut to `limit` (the first page, without a cursor). */
export function applyListFilter(summaries: SessionSummary[], filter: ListFilter = {}): SessionSummary[] {
  return pageOf(summaries, { ...filter, cursor: undefined }).sessions
}

/** What a session manager knows that its store does not (see `listSessions`). */
export interface LiveSessions {
  /** The current summaries of the sessions in memory, persisted or not. */
  summaries(): SessionSummary[]
  /** True for a session no listing may show (its delete has begun). */
  hidden(id: string): boolean
}

/**
 * THE session listing, whatever the surface: the stored sessions that pass the query, where a
 * live session (in `live`) is listed by its current summary instead of its stored one, and live
 * sessions the store does not hold (`persist: false`) are listed too; sessions being deleted are
 * not. Filters apply to the summary listed. One order (`compareListed`), one cursor, `nextCursor`
 * exactly when more rows follow. Without `live` (a process with no manager, such as the CLI),
 * the stored sessions alone.
 */
export async function listSessions(
  store: EventStore,
  query: PageQuery = {},
  live?: LiveSessions,
): Promise<SessionPage> {
  const limit = limitOf(query.limit)
  const current = live?.summaries() ?? []
  const liveIds = new Set(current.map((s) => s.session_id))
  const skip = (id: string): boolean => liveIds.has(id) || (live?.hidden(id) ?? false)
  // Stored rows, minus the live and hidden ones, until one more than a page (or the end): any
  // stored row not read then comes after every row read, so the merged page below is exact.
  const stored: SessionSummary[] = []
  let cursor = query.cursor
  let more = true
  while (more && stored.length <= limit) {
    const page = await store.listPage({ ...query, cursor, limit: limit === Infinity ? undefined : limit + 1 })
    for (const s of page.sessions) if (!skip(s.session_id)) stored.push(s)
    cursor = page.nextCursor
    more = cursor !== undefined
  }
  const shown = current.filter((s) => !(live?.hidden(s.session_id) ?? false))
  return pageOf([...stored, ...shown], query)
}
