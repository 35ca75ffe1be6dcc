/**
 * The console report: one line per requirement and transport as it finishes, details under a
 * failure (the step's line, the message, each contract violation with its rule and spec
 * location, the last frames), and a summary ending in the plain `N passed, N failed, N skipped`.
 */
import type { Result } from '../run/runner.ts'
import { describeViolation } from '../run/violations.ts'
import { counts } from './summary.ts'

const TAG = { pass: 'PASS ', fail: 'FAIL ', xfail: 'XFAIL', stale: 'STALE', skip: 'SKIP ' } as const

export function resultLine(r: Result, verbose = false): string {
  const head = `${TAG[r.status]} ${r.id} [${r.transport}] ${r.title} (${r.durationMs} ms)`
  const lines = [head]
  if (r.status === 'fail' || r.status === 'stale' || (r.status === 'skip' && r.message) || (r.status === 'xfail' && verbose)) {
    if (r.status === 'xfail' && r.expectedReason) lines.push(`      expected: ${r.expectedReason}`)
    if (r.message) lines.push(`      ${r.line !== undefined ? `${r.file}:${r.line}: ` : ''}${r.message.split('\n').join('\n      ')}`)
    if (r.status === 'fail') {
      for (const v of r.violations.slice(0, 5)) lines.push(`      violation ${describeViolation(v)}`)
      if (verbose) for (const t of r.transcript ?? []) lines.push(`        ${t}`)
    }
  }
  return lines.join('\n')
}

export function summaryText(results: readonly Result[]): string {
  const c = counts(results)
  const out: string[] = ['']
  const bySurface = new Map<string, { pass: number; fail: number; xfail: number; skip: number }>()
  for (const r of results) {
    const k = `${r.surface} [${r.transport}]`
    const e = bySurface.get(k) ?? { pass: 0, fail: 0, xfail: 0, skip: 0 }
    if (r.status === 'pass') e.pass++
    else if (r.status === 'fail' || r.status === 'stale') e.fail++
    else e[r.status]++
    bySurface.set(k, e)
  }
  for (const [k, e] of [...bySurface].sort()) out.push(`  ${k.padEnd(24)} ${e.pass} passed, ${e.fail} failed${e.xfail ? `, ${e.xfail} expected failure(s)` : ''}${e.skip ? `, ${e.skip} skipped` : ''}`)
  if (c.xfail) out.push(`${c.xfail} expected failure(s)`)
  if (c.stale) out.push(`${c.stale} stale expected failure(s): listed, but passing (remove them from the list)`)
  out.push(`${c.pass} passed, ${c.fail + c.stale} failed, ${c.skip} skipped`)
  return out.join('\n')
}
