/** Counts of a run, and the rule for its exit code: 0 only when nothing unexpected happened. */
import type { Result, Status } from '../run/runner.ts'

export type Counts = Record<Status, number> & { total: number }

export function counts(results: readonly Result[]): Counts {
  const c: Counts = { pass: 0, fail: 0, xfail: 0, stale: 0, skip: 0, total: results.length }
  for (const r of results) c[r.status]++
  return c
}

/** Unexpected: a failure not on the list, or a listed failure that now passes. */
export const exitCodeOf = (results: readonly Result[]): 0 | 1 => (results.some((r) => r.status === 'fail' || r.status === 'stale') ? 1 : 0)
