/**
 * The filters of `/runs`, `/runs/cost` and `chimera mink runs`: `since` (`7d`, `24h`, `30m`, an
 * ISO-8601 date or date-time), `model` (case-insensitive substring; `all` or empty: none) and
 * `limit` (a positive integer: the newest N). A malformed value is an `invalid_query` error whose message (and detail) names the parameter.
 */
import { ChimeraError } from '../errors.ts'
import { parseSince } from '../store/since.ts'

/** A malformed filter: `invalid_query`, its detail the message (which names the parameter). */
export const invalidQuery = (message: string): ChimeraError<'invalid_query'> =>
  new ChimeraError('invalid_query', message, { detail: message })

/** The corpus could not be read: `runs_cost_failed`, its detail the message. */
export const runsFailed = (message: string, cause?: unknown): ChimeraError<'runs_cost_failed'> =>
  new ChimeraError('runs_cost_failed', message, { detail: message, cause })

export interface RunsFilter {
  since?: Date
  /** The `since` value as given (echoed in the cost rollup's `filters`). */
  sinceText?: string
  /** Lower-cased substring; absent for none. */
  model?: string
  /** The `model` value as given. */
  modelText?: string
  limit?: number
}

const MAX_LIMIT = 1_000_000

/** Parse raw query values (strings, as a URL or a command line gives them). Unknown keys are ignored. */
export function parseRunsQuery(q: Readonly<Record<string, unknown>>, now: Date = new Date()): RunsFilter {
  const one = (key: string): string | undefined => {
    const v = q[key]
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'string') throw invalidQuery(`${key} must be given once, as a string`)
    return v
  }
  const f: RunsFilter = {}
  const since = one('since')
  if (since !== undefined && since !== '') {
    try {
      f.since = parseSince(since, now)
    } catch (err) {
      throw invalidQuery(`since: ${(err as Error).message}`)
    }
    f.sinceText = since
  }
  const model = one('model')
  if (model !== undefined && model !== '' && model.toLowerCase() !== 'all') {
    f.model = model.toLowerCase()
    f.modelText = model
  }
  const limit = one('limit')
  if (limit !== undefined) {
    const n = Number(limit)
    if (!/^[0-9]+$/.test(limit) || !Number.isSafeInteger(n) || n < 1 || n > MAX_LIMIT) {
      throw invalidQuery(`limit must be an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(limit.slice(0, 40))}`)
    }
    f.limit = n
  }
  return f
}
