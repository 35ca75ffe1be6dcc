/**
 * The run corpus behind `/runs` and `/runs/cost`: every stored `otter-*`, `ferret-*` and
 * `mink-*` session, read through its summary only (`EventStore.scanSummaries`: never its events,
 * so ten thousand sessions stay fast). A session whose summary is missing, not JSON, or not a
 * session summary is skipped and counted.
 */
import { sessionIdTime } from '../store/paths.ts'
import { ChimeraError } from '../errors.ts'
import type { EventStore } from '../store/types.ts'
import { runsFailed, type RunsFilter } from './query.ts'

export type RunSource = 'otter' | 'ferret' | 'mink'

/** One run, from its summary. */
export interface RunRecord {
  run_id: string
  source: RunSource
  startedMs: number
  started_at: string
  ended_at: string | null
  model: string
  prompt: string
  success: boolean | null
  cost_usd: number
  steps: number
  tool_calls: number
  input_tokens: number
  output_tokens: number
  cache_tokens: number
  total_tokens: number
}

/** Session ids that are runs: a known prefix, then the id characters the SessionId schema allows. */
const RUN_DIR_RE = /^(otter|ferret|mink)-[A-Za-z0-9_.:-]{1,120}$/

const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The run a summary describes, or undefined when it is not a usable session summary. */
export function runFromSummary(dirName: string, value: unknown): RunRecord | undefined {
  const m = RUN_DIR_RE.exec(dirName)
  if (!m || !isObj(value) || value.session_id !== dirName) return undefined
  const s = value
  const usage = isObj(s.usage) ? s.usage : {}
  // Optional fields must have their schema types when present; anything else is damage.
  const optional: [unknown, (v: unknown) => boolean][] = [
    [s.started_at, (v) => typeof v === 'string'],
    [s.ended_at, (v) => v === null || typeof v === 'string'],
    [s.model, (v) => typeof v === 'string'],
    [s.prompt, (v) => typeof v === 'string'],
    [s.success, (v) => v === null || typeof v === 'boolean'],
    [s.cost_usd, (v) => count(v) !== undefined],
    [s.steps, (v) => count(v) !== undefined],
    [s.tool_calls, (v) => count(v) !== undefined],
    [s.created_at, (v) => typeof v === 'number'],
  ]
  if (optional.some(([v, ok]) => v !== undefined && !ok(v))) return undefined
  let startedMs = typeof s.started_at === 'string' ? Date.parse(s.started_at) : Number.NaN
  if (!Number.isFinite(startedMs) && typeof s.created_at === 'number') startedMs = s.created_at * 1000
  if (!Number.isFinite(startedMs)) startedMs = sessionIdTime(dirName) ?? Number.NaN
  if (!Number.isFinite(startedMs)) return undefined
  const input = count(usage.input_tokens) ?? 0
  const output = count(usage.output_tokens) ?? 0
  const cache =
    count(usage.cache_tokens) ?? (count(usage.cache_read_tokens) ?? 0) + (count(usage.cache_write_tokens) ?? 0)
  return {
    run_id: dirName,
    source: m[1] as RunSource,
    startedMs,
    started_at: typeof s.started_at === 'string' ? s.started_at : new Date(startedMs).toISOString(),
    ended_at: typeof s.ended_at === 'string' ? s.ended_at : null,
    model: typeof s.model === 'string' ? s.model : '',
    prompt: typeof s.prompt === 'string' ? s.prompt : '',
    success: typeof s.success === 'boolean' ? s.success : null,
    // The flat cost is the session's priced cost (an unpriced model counts 0, never a guess).
    cost_usd: count(s.cost_usd) ?? count(usage.cost_usd) ?? 0,
    steps: count(s.steps) ?? 0,
    tool_calls: count(s.tool_calls) ?? 0,
    input_tokens: input,
    output_tokens: output,
    cache_tokens: cache,
    total_tokens: count(usage.total_tokens) ?? input + output + cache,
  }
}

/** Newest first (by start, then by id descending, as session listings order). */
function newestFirst(a: RunRecord, b: RunRecord): number {
  if (a.startedMs !== b.startedMs) return b.startedMs - a.startedMs
  return a.run_id < b.run_id ? 1 : a.run_id > b.run_id ? -1 : 0
}

/** The stored runs that pass `filter`, newest first, and how many sessions were skipped as damaged. */
export async function readRuns(
  store: EventStore,
  filter: RunsFilter = {},
): Promise<{ runs: RunRecord[]; skipped: number }> {
  const sinceMs = filter.since?.getTime()
  const runs: RunRecord[] = []
  let skipped = 0
  try {
    for await (const { session_id, summary } of store.scanSummaries()) {
      const r = summary === undefined ? undefined : runFromSummary(session_id, summary)
      if (!r) {
        skipped++
        continue
      }
      if (sinceMs !== undefined && !(r.startedMs >= sinceMs)) continue
      if (filter.model !== undefined && !r.model.toLowerCase().includes(filter.model)) continue
      runs.push(r)
    }
  } catch (err) {
    // A store that says what went wrong (Redis unavailable: 503 with Retry-After) is passed on.
    if (ChimeraError.is(err)) throw err
    throw runsFailed(`cannot read the event log: ${(err as Error).message}`, err)
  }
  runs.sort(newestFirst)
  return { runs: filter.limit === undefined ? runs : runs.slice(0, filter.limit), skipped }
}
