/**
 * `list` semantics shared by every store: which summaries pass a `ListFilter`, and the
 * newest-first order (by `started_at`, falling back to `created_at` and then to the instant
 * encoded in the session id).
 */
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import { AGENT_PREFIXES, agentOf, sessionIdTime } from './paths.ts'
import type { ListFilter } from './types.ts'

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
  return true
}

/** Filter, sort newest first (ties by id, descending) and cut to `limit`. */
export function applyListFilter(summaries: SessionSummary[], filter: ListFilter = {}): SessionSummary[] {
  const keyed = summaries.filter((s) => matchesFilter(s, filter)).map((s) => ({ s, t: startedMs(s) }))
  keyed.sort((a, b) => {
    const ta = Number.isNaN(a.t) ? -Infinity : a.t
    const tb = Number.isNaN(b.t) ? -Infinity : b.t
    if (ta !== tb) return tb - ta
    return a.s.session_id < b.s.session_id ? 1 : a.s.session_id > b.s.session_id ? -1 : 0
  })
  const out = keyed.map((k) => k.s)
  return filter.limit === undefined ? out : out.slice(0, Math.max(0, Math.floor(filter.limit)))
}
