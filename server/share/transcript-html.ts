/**
 * The HTML transcript: one self-contained page (inline CSS, no script, no external URL, a
 * Content-Security-Policy that forbids scripts and remote loads as a second line of defence).
 * Every piece of session content goes through `esc` and lands only in text or in quoted
 * attribute values this file writes; no session content ever becomes a tag, an attribute name
 * or a URL. Tool calls are collapsed in `<details>`, diffs from `file_edit` are shown line by
 * line as additions, deletions and hunks.
 */
import type { Usage } from '../../generated/schemas.gen.ts'
import { foldTranscript, type Item, type SessionDetail, type ToolItem } from './transcript-model.ts'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text safe in element content and in double- or single-quoted attribute values. */
export function esc(s: unknown): string {
  // Lone surrogates and NUL cannot be encoded faithfully; everything else is kept as text.
  return String(s)
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    .replace(/\0/g, '\uFFFD')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
}

const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--user:#ddf4ff;--tool:#f6f8fa;--add:#e6ffec;--del:#ffebe9;--hunk:#ddf4ff;--err:#cf222e;--warn:#9a6700}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#30363d;--user:#0c2d6b;--tool:#161b22;--add:#033a16;--del:#67060c;--hunk:#0c2d6b;--err:#ff7b72;--warn:#d29922}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:920px;margin:0 auto;padding:24px 16px 64px}h1{font-size:1.3rem;margin:0 0 8px;word-break:break-all}
h2{font-size:1rem;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line);display:flex;gap:8px;align-items:baseline}
h2 .outcome{font-size:.8rem;font-weight:normal;color:var(--muted)}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0;color:var(--muted);font-size:.9rem}dl.meta dd{margin:0;color:var(--fg);word-break:break-word}
.msg{margin:10px 0;padding:10px 12px;border-radius:8px;border:1px solid var(--line)}.msg .who{font-size:.75rem;font-weight:600;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin-bottom:4px}
.user{background:var(--user)}.text{white-space:pre-wrap;word-break:break-word}
pre{margin:6px 0;padding:8px 10px;background:var(--tool);border:1px solid var(--line);border-radius:6px;overflow:auto;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
details{margin:8px 0;border:1px solid var(--line);border-radius:8px;background:var(--tool)}details>summary{cursor:pointer;padding:6px 10px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
details>.body{padding:0 10px 8px}details pre{background:var(--bg)}.label{font-size:.75rem;color:var(--muted);margin-top:6px}
.ok{color:inherit}.fail{color:var(--err)}.notice{margin:8px 0;font-size:.9rem;color:var(--muted)}.notice.error{color:var(--err)}.notice.warning{color:var(--warn)}.plan ul{margin:4px 0;padding-left:18px;list-style:none}.plan li.completed{color:var(--muted);text-decoration:line-through}
pre.diff{padding:0}pre.diff span{display:block;padding:0 10px}pre.diff .add{background:var(--add)}pre.diff .del{background:var(--del)}pre.diff .hunk{background:var(--hunk);color:var(--muted)}pre.diff .file{font-weight:600}
.usage{font-size:.8rem;color:var(--muted);margin-top:6px}footer{margin-top:40px;font-size:.8rem;color:var(--muted)}
`

/** The page's Content-Security-Policy: in its `<meta>`, and as a header where the server sends it. */
export const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; form-action 'none'; base-uri 'none'"

function pretty(v: unknown): string {
  try {
    return JSON.stringify(v, null, 2) ?? String(v)
  } catch {
    return String(v)
  }
}

function usageLine(u: Usage | undefined): string {
  if (!u) return ''
  const parts = [`${u.input_tokens} in`, `${u.output_tokens} out`]
  if (u.cache_tokens) parts.push(`${u.cache_tokens} cache`)
  if (u.reasoning_tokens) parts.push(`${u.reasoning_tokens} reasoning`)
  const cost = u.cost_usd === null ? 'cost unknown' : u.cost_usd !== undefined ? `$${u.cost_usd}` : ''
  return `<div class="usage">tokens: ${esc(parts.join(', '))}${cost ? ` · ${esc(cost)}` : ''}</div>`
}

/** A unified diff, one span per line, classed by its first character. */
export function diffHtml(diff: string): string {
  const lines = diff.replace(/\n$/, '').split('\n')
  const cls = (l: string): string =>
    l.startsWith('+++') || l.startsWith('---') || l.startsWith('Index:') || l.startsWith('====')
      ? 'file'
      : l.startsWith('@@')
        ? 'hunk'
        : l.startsWith('+')
          ? 'add'
          : l.startsWith('-')
            ? 'del'
            : 'ctx'
  return `<pre class="diff">${lines.map((l) => `<span class="${cls(l)}">${esc(l) || ' '}</span>`).join('')}</pre>`
}

/** A one-line description of a tool call for its summary: the tool and its main argument. */
function toolTitle(t: ToolItem): string {
  const a = t.args
  const main = ['path', 'command', 'pattern', 'file_path', 'query']
    .map((k) => a[k])
    .find((v) => typeof v === 'string') as string | undefined
  const shown = main === undefined ? '' : ` ${main.length > 100 ? `${main.slice(0, 100)}…` : main}`
  const status = !t.result ? 'no result' : t.result.ok ? 'ok' : 'error'
  return `${t.tool}${shown.replace(/\s+/g, ' ')} — ${status}`
}

function toolHtml(t: ToolItem): string {
  const parts = [`<div class="label">arguments</div><pre>${esc(pretty(t.args))}</pre>`]
  if (t.permission) {
    const p = t.permission
    parts.push(
      `<div class="label">permission</div><div>${esc(`asked${p.risk ? ` (risk ${p.risk})` : ''} → ${p.decision ?? 'no reply'}${p.source ? ` (${p.source})` : ''}`)}</div>`,
    )
  }
  if (t.result) {
    const took = t.result.durationMs !== undefined ? ` in ${Math.round(t.result.durationMs)} ms` : ''
    parts.push(
      `<div class="label">${t.result.ok ? 'output' : 'error'}${esc(took)}</div><pre class="${t.result.ok ? 'ok' : 'fail'}">${esc(t.result.text)}</pre>`,
    )
  }
  return `<details class="tool"><summary class="${!t.result || t.result.ok ? 'ok' : 'fail'}">${esc(toolTitle(t))}</summary><div class="body">${parts.join('')}</div></details>`
}

const PLAN_MARK = { completed: '[x]', in_progress: '[~]', pending: '[ ]' } as const

function itemHtml(i: Item): string {
  switch (i.kind) {
    case 'user': {
      const cmd = i.command ? `<div class="label">/${esc(i.command.name)} ${esc(i.command.arguments)}</div>` : ''
      return `<div class="msg user"><div class="who">User</div>${cmd}<div class="text">${esc(i.text)}</div></div>`
    }
    case 'steering':
      return `<div class="msg user"><div class="who">User (steering)</div><div class="text">${esc(i.text)}</div></div>`
    case 'assistant':
      return `<div class="msg"><div class="who">Assistant</div><div class="text">${esc(i.text)}</div></div>`
    case 'reasoning':
      return `<details class="reasoning"><summary>Reasoning</summary><div class="body"><div class="text">${esc(i.text)}</div></div></details>`
    case 'tool':
      return toolHtml(i)
    case 'diff':
      return `<details class="edit" open><summary>${esc(`edit ${i.path}`)}</summary><div class="body">${diffHtml(i.diff)}</div></details>`
    case 'plan': {
      const rows = i.entries.map(
        (p) =>
          `<li class="${p.status}">${esc(`${PLAN_MARK[p.status]} ${p.content}`)}${p.priority === 'medium' ? '' : ` <span class="label">${esc(p.priority)}</span>`}</li>`,
      )
      return `<div class="plan"><div class="label">plan</div>${rows.length ? `<ul>${rows.join('')}</ul>` : '<div class="notice">(cleared)</div>'}</div>`
    }
    case 'notice': {
      const detail = i.detail
        ? `<details><summary>details</summary><div class="body"><div class="text">${esc(i.detail)}</div></div></details>`
        : ''
      return `<div class="notice ${i.level}">${esc(i.text)}</div>${detail}`
    }
  }
}

/** The session as one HTML page. */
export function renderHtml(detail: SessionDetail): string {
  const s = detail.summary
  const meta: [string, unknown][] = [
    ['Model', s.model],
    ['Started', s.started_at],
    ['Ended', s.ended_at],
    ['Result', s.success === true ? 'success' : s.success === false ? 'failed' : undefined],
    ['Steps', s.steps],
    ['Tool calls', s.tool_calls],
    ['Cost', s.cost_usd !== undefined ? `$${s.cost_usd}` : undefined],
    ['Directory', s.working_dir],
  ]
  const dl = meta
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`)
    .join('')
  const turns = foldTranscript(detail.events)
    .map((t) => {
      const outcome = t.outcome ? `<span class="outcome">${esc(t.outcome)}</span>` : ''
      return `<section class="turn"><h2>Turn ${t.index + 1}${outcome}</h2>${t.items.map(itemHtml).join('\n')}${usageLine(t.usage)}</section>`
    })
    .join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}"><meta name="referrer" content="no-referrer">
<title>${esc(`Chimera session ${detail.session_id}`)}</title><style>${STYLE}</style></head>
<body><main><header><h1>${esc(s.title ?? (s.prompt ? s.prompt.split('\n')[0]!.slice(0, 200) : detail.session_id))}</h1><dl class="meta"><dt>Session</dt><dd>${esc(detail.session_id)}</dd>${dl}</dl></header>
${turns || '<p class="notice">No turns yet.</p>'}
<footer>${esc(`${detail.events.length} events`)}</footer></main></body></html>
`
}
