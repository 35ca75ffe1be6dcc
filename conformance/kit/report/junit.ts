/**
 * The JUnit XML report, as CI systems read it: one <testsuite> per transport, one <testcase>
 * per requirement (name = requirement id, classname = surface), <failure> for a failure or a
 * stale expected failure, <skipped> for a skip and for an expected failure (with its reason).
 */
import type { Result } from '../run/runner.ts'
import { describeViolation } from '../run/violations.ts'

const esc = (s: string): string =>
  s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')

export function junitReport(results: readonly Result[]): string {
  const byTransport = new Map<string, Result[]>()
  for (const r of results) byTransport.set(r.transport, [...(byTransport.get(r.transport) ?? []), r])
  const suites = [...byTransport].map(([t, rs]) => {
    const failures = rs.filter((r) => r.status === 'fail' || r.status === 'stale').length
    const skipped = rs.filter((r) => r.status === 'skip' || r.status === 'xfail').length
    const time = rs.reduce((a, r) => a + r.durationMs, 0) / 1000
    const cases = rs.map((r) => {
      const attrs = `name="${esc(r.id)}" classname="${esc(`${r.surface}.${r.transport}`)}" file="${esc(r.file)}" time="${(r.durationMs / 1000).toFixed(3)}"`
      if (r.status === 'pass') return `    <testcase ${attrs}/>`
      if (r.status === 'skip') return `    <testcase ${attrs}><skipped message="${esc(r.message ?? '')}"/></testcase>`
      if (r.status === 'xfail') return `    <testcase ${attrs}><skipped message="${esc(`expected failure: ${r.expectedReason ?? ''}`)}"/></testcase>`
      const body = [r.message ?? '', ...r.violations.map(describeViolation), ...(r.transcript ?? [])].join('\n')
      return `    <testcase ${attrs}><failure message="${esc((r.message ?? '').split('\n')[0]!.slice(0, 500))}" type="${r.status}">${esc(body)}</failure></testcase>`
    })
    return `  <testsuite name="chimera-conformance ${esc(t)}" tests="${rs.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time.toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`
  })
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="chimera-conformance">\n${suites.join('\n')}\n</testsuites>\n`
}
