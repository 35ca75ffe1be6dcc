/**
 * Counts of a run, and the rule for its exit code: a failure fails the run by its level (MUST
 * always; SHOULD and MAY only when `--fail-on` lowers the bar; a contract violation is a MUST
 * whatever the requirement's level), a stale expected failure and a problem of the list always.
 */
import { TRANSPORTS, type Level } from '../corpus/ids.ts'
import type { Result, Status } from '../run/runner.ts'

export type Counts = Record<Status, number> & { total: number; failBelowBar: number }

const RANK: Record<Level, number> = { MUST: 0, SHOULD: 1, MAY: 2 }

/** The level a failure counts at: a contract violation is a MUST. */
export const failureLevel = (r: Pick<Result, 'level' | 'violations'>): Level => (r.violations.length ? 'MUST' : r.level)

/** True for a failure that fails the run at `failOn` (MUST: only MUST failures; SHOULD: MUST and SHOULD; MAY: all). */
export const failsRun = (r: Pick<Result, 'status' | 'level' | 'violations'>, failOn: Level = 'MUST'): boolean =>
  r.status === 'stale' || (r.status === 'fail' && RANK[failureLevel(r)] <= RANK[failOn])

export function counts(results: readonly Result[], failOn: Level = 'MUST'): Counts {
  const c: Counts = { pass: 0, fail: 0, xfail: 0, stale: 0, skip: 0, na: 0, total: results.length, failBelowBar: 0 }
  for (const r of results) {
    c[r.status]++
    if (r.status === 'fail' && !failsRun(r, failOn)) c.failBelowBar++
  }
  return c
}

/** The counts of each transport the results ran on, in the kit's transport order. */
export function countsByTransport(results: readonly Result[], failOn: Level = 'MUST'): Record<string, Counts> {
  const out: Record<string, Counts> = {}
  for (const t of TRANSPORTS) {
    const mine = results.filter((r) => r.transport === t)
    if (mine.length) out[t] = counts(mine, failOn)
  }
  return out
}

/** 1 when something failed the run (see the file comment) or the expected-failures list has problems. */
export const exitCodeOf = (results: readonly Result[], failOn: Level = 'MUST', listProblems = 0): 0 | 1 =>
  listProblems > 0 || results.some((r) => failsRun(r, failOn)) ? 1 : 0
