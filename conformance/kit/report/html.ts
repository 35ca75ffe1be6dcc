/**
 * The HTML report, for a person: one self-contained page (inline styles, no script, nothing
 * fetched) with the run's versions and counts, the problems of the expected-failures list, and
 * one row per requirement: its id, title, level and section, and per transport its verdict; under
 * a failure (or an expected failure) the step that did not hold, each contract violation and the
 * last frames, per transport. Everything taken from the run is escaped.
 */
import { TRANSPORTS, type Level } from '../corpus/ids.ts'
import type { Result } from '../run/runner.ts'
import { describeViolation } from '../run/violations.ts'
import type { JsonReport } from './json.ts'
import { failsRun, failureLevel } from './summary.ts'

const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

const VERDICT: Record<Result['status'], string> = {
  pass: 'pass',
  fail: 'FAIL',
  xfail: 'expected failure',
  stale: 'STALE',
  skip: 'skipped',
  na: 'n/a',
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
.meta{color:#57606a;margin:0 0 12px}.meta code{color:#1b1f24}
.counts span{display:inline-block;margin:0 12px 6px 0;padding:2px 8px;border-radius:10px;background:#eef1f4}
table{border-collapse:collapse;width:100%}tr.more td{border-top:0;padding-top:0}th,td{border-bottom:1px solid #d8dee4;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;position:sticky;top:0}td.v{white-space:nowrap;font-weight:600}
.pass{color:#1a7f37}.FAIL,.STALE{color:#cf222e}.soft{color:#9a6700}.xfail{color:#8250df}.skipped{color:#6e7781;font-weight:400}
.id{font-family:ui-monospace,monospace;font-size:13px}.title{color:#57606a;font-size:13px}
details{margin:4px 0}summary{cursor:pointer}pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:8px;border-radius:6px;font-size:12px;margin:4px 0}
.problems li{color:#cf222e}`

function cell(r: Result | undefined, failOn: Level): string {
  if (!r) return '<td class="v skipped">—</td>'
  const soft = r.status === 'fail' && !failsRun(r, failOn)
  const cls = soft
    ? 'soft'
    : r.status === 'xfail'
      ? 'xfail'
      : r.status === 'skip' || r.status === 'na'
        ? 'skipped'
        : VERDICT[r.status]
  const label = soft ? `fail (${failureLevel(r)})` : VERDICT[r.status]
  return `<td class="v ${cls}" title="${esc(r.message ?? '')}">${esc(label)}</td>`
}

function failure(r: Result): string {
  const head = `${r.transport}: ${VERDICT[r.status]}${r.expectedReason ? ` — listed: ${r.expectedReason}` : ''}`
  const where = r.line !== undefined ? `${r.file}:${r.line}: ` : ''
  // A result failed only by violations says so in its message; list each violation once.
  const message = r.message?.startsWith('contract violation:') ? [] : [`${where}${r.message ?? ''}`]
  const body = [...message, ...r.violations.map((v) => `violation ${describeViolation(v)}`)].join('\n')
  const frames = r.transcript?.length
    ? `<details><summary>last frames and stderr (${r.transcript.length})</summary><pre>${esc(r.transcript.join('\n'))}</pre></details>`
    : ''
  return `<details${r.status === 'xfail' ? '' : ' open'}><summary>${esc(head)}</summary><pre>${esc(body)}</pre>${frames}</details>`
}

export function htmlReport(report: JsonReport): string {
  const { results } = report
  const transports = TRANSPORTS.filter((t) => results.some((r) => r.transport === t))
  const byId = new Map<string, Result[]>()
  for (const r of results) byId.set(r.id, [...(byId.get(r.id) ?? []), r])
  const rows = [...byId].map(([id, rs]) => {
    const first = rs[0]!
    const detail = rs
      .filter((r) => r.status === 'fail' || r.status === 'stale' || r.status === 'xfail')
      .map(failure)
      .join('')
    const skips = rs
      .filter((r) => (r.status === 'skip' || r.status === 'na') && r.message)
      .map((r) => `${r.transport}: ${r.message}`)
    const more =
      detail + (skips.length ? `<details><summary>skipped</summary><pre>${esc(skips.join('\n'))}</pre></details>` : '')
    // The failures' details span the whole row under it, so frames read at full width.
    const under = more ? `<tr class="more"><td colspan="${3 + transports.length}">${more}</td></tr>` : ''
    return `<tr><td><div class="id">${esc(id)}</div><div class="title">${esc(first.title)}</div></td><td>${esc(first.level)}</td><td class="title">${esc(first.section)}</td>${transports
      .map((t) =>
        cell(
          rs.find((r) => r.transport === t),
          report.failOn,
        ),
      )
      .join('')}</tr>${under}`
  })
  const s = report.summary
  const impl =
    Object.entries(report.target.implementations)
      .map(([t, v]) => `${t}: ${v.join(', ')}`)
      .join('; ') || 'not announced'
  const problems = report.listProblems.length
    ? `<h2>Expected-failures list</h2><ul class="problems">${report.listProblems.map((p) => `<li><code>${esc(p.id)}${p.transport ? ` [${esc(p.transport)}]` : ''}</code>: ${esc(p.problem)} (${esc(p.reason)})</li>`).join('')}</ul>`
    : ''
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Conformance: ${esc(report.target.profile)}</title><style>${STYLE}</style></head><body>
<h1>Conformance report: ${esc(report.target.profile)}</h1>
<p class="meta">kit <code>${esc(report.kit.name)} ${esc(report.kit.version)}</code> · corpus <code>${esc(report.corpus.hash)}</code> (${report.corpus.requirements} requirements) · implementation ${esc(impl)} · started ${esc(report.startedAt)} · failing at ${esc(report.failOn)}</p>
<p class="counts"><span class="pass">${s.pass} passed</span><span class="FAIL">${s.fail + s.stale} failed${s.failBelowBar ? ` (${s.failBelowBar} below ${esc(report.failOn)})` : ''}</span><span class="xfail">${s.xfail} expected failures</span>${s.na ? `<span class="skipped">${s.na} not applicable</span>` : ''}<span class="skipped">${s.skip} skipped</span></p>
${problems}
<table><thead><tr><th>requirement</th><th>level</th><th>section</th>${transports.map((t) => `<th>${esc(t)}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
</body></html>
`
}
