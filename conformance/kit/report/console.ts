/**
 * The console report: one line per requirement and transport as it finishes, details under a
 * failure (the step's line, the message, each contract violation with its rule and spec
 * location, with --verbose the last frames; an expected failure shows the same with --verbose),
 * then the problems of the expected-failures list and a summary ending in the plain
 * `N passed, N failed, N skipped`.
 */
import type { Level } from '../corpus/ids.ts'
import type { ListProblem } from '../run/expected.ts'
import type { Result } from '../run/runner.ts'
import { describeViolation } from '../run/violations.ts'
import { counts, countsByTransport, failsRun, failureLevel } from './summary.ts'

const TAG = { pass: 'PASS ', fail: 'FAIL ', xfail: 'XFAIL', stale: 'STALE', skip: 'SKIP ', na: 'N/A  ' } as const

export function resultLine(r: Result, verbose = false, failOn: Level = 'MUST'): string {
  const below =
    r.status === 'fail' && !failsRun(r, failOn)
      ? ` — ${failureLevel(r)}: reported, does not fail the run (--fail-on ${failureLevel(r).toLowerCase()} to make it)`
      : ''
  const head = `${TAG[r.status]} ${r.id} [${r.transport}] ${r.title} (${r.durationMs} ms)${below}`
  const lines = [head]
  if (
    r.status === 'fail' ||
    r.status === 'stale' ||
    ((r.status === 'skip' || r.status === 'na') && r.message) ||
    (r.status === 'xfail' && verbose)
  ) {
    if (r.status === 'xfail' && r.expectedReason) lines.push(`      expected: ${r.expectedReason}`)
    if (r.message)
      lines.push(
        `      ${r.line !== undefined ? `${r.file}:${r.line}: ` : ''}${r.message.split('\n').join('\n      ')}`,
      )
    if (r.status === 'fail' || r.status === 'xfail') {
      for (const v of r.violations.slice(0, 5)) lines.push(`      violation ${describeViolation(v)}`)
      if (verbose) for (const t of r.transcript ?? []) lines.push(`        ${t}`)
    }
  }
  return lines.join('\n')
}

export function listProblemLines(problems: readonly ListProblem[]): string[] {
  return problems.map(
    (p) =>
      `LIST  ${p.entry.id}${p.entry.transport ? ` [${p.entry.transport}]` : ''}: ${p.problem} (expected-failures entry: ${p.entry.reason})`,
  )
}

export function summaryText(
  results: readonly Result[],
  failOn: Level = 'MUST',
  problems: readonly ListProblem[] = [],
): string {
  const c = counts(results, failOn)
  const out: string[] = ['']
  const bySurface = new Map<string, { pass: number; fail: number; xfail: number; skip: number; na: number }>()
  for (const r of results) {
    const k = `${r.surface} [${r.transport}]`
    const e = bySurface.get(k) ?? { pass: 0, fail: 0, xfail: 0, skip: 0, na: 0 }
    if (r.status === 'pass') e.pass++
    else if (r.status === 'fail' || r.status === 'stale') e.fail++
    else e[r.status]++
    bySurface.set(k, e)
  }
  for (const [k, e] of [...bySurface].sort())
    out.push(
      `  ${k.padEnd(24)} ${e.pass} passed, ${e.fail} failed${e.xfail ? `, ${e.xfail} expected failure(s)` : ''}${e.na ? `, ${e.na} not applicable` : ''}${e.skip ? `, ${e.skip} skipped` : ''}`,
    )
  const byTransport = Object.entries(countsByTransport(results, failOn))
  if (byTransport.length > 1 || c.na)
    for (const [t, n] of byTransport)
      out.push(
        `  ${`[${t}]`.padEnd(24)} ${n.pass} passed, ${n.fail + n.stale} failed, ${n.xfail} expected failure(s), ${n.na} not applicable, ${n.skip} skipped`,
      )
  if (c.xfail) out.push(`${c.xfail} expected failure(s)`)
  if (c.stale) out.push(`${c.stale} stale expected failure(s): listed, but passing (remove them from the list)`)
  if (c.failBelowBar)
    out.push(`${c.failBelowBar} failure(s) below ${failOn} (SHOULD/MAY): reported, not failing the run`)
  if (problems.length)
    out.push(...listProblemLines(problems), `${problems.length} problem(s) in the expected-failures list`)
  if (c.na) out.push(`${c.na} not applicable (ACP over the network: stdio-only checks)`)
  out.push(`${c.pass} passed, ${c.fail + c.stale} failed, ${c.skip} skipped`)
  return out.join('\n')
}
