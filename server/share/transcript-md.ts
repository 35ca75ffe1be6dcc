/**
 * The Markdown transcript. Verbatim content (the user's messages, tool arguments and output,
 * diffs, reasoning) goes in fenced blocks whose fence is longer than any backtick run inside,
 * so nothing can close it early. The assistant's prose stays Markdown, with raw HTML and
 * link/image syntax neutralised (`<`, `>`, `&` as entities, `[` `]` escaped): a renderer that
 * allows HTML still shows text, and no link the session wrote becomes clickable.
 */
import type { Usage } from '../../generated/schemas.gen.ts'
import { foldTranscript, type Item, type SessionDetail } from './transcript-model.ts'

/** A fenced block of `text` that `text` cannot break out of. */
export function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const f = '`'.repeat(longest + 1)
  return `${f}${lang}\n${text.replace(/\n$/, '')}\n${f}`
}

/** Prose: Markdown kept, raw HTML and links neutralised. */
export function prose(text: string): string {
  return text
    .replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'))
    .replace(/[[\]]/g, (c) => `\\${c}`)
}

/** One line of inline text (headings, labels): also no emphasis or code spans. */
const inline = (text: string): string =>
  prose(text.replace(/\s+/g, ' ')).replace(/[\\`*_#|]/g, (c) => (c === '\\' ? c : `\\${c}`))

function usageLine(u: Usage | undefined): string {
  if (!u) return ''
  const cost = u.cost_usd === null ? ', cost unknown' : u.cost_usd !== undefined ? `, $${u.cost_usd}` : ''
  return `\n_Tokens: ${u.input_tokens} in, ${u.output_tokens} out${u.cache_tokens ? `, ${u.cache_tokens} cache` : ''}${cost}_\n`
}

function itemMd(i: Item): string {
  switch (i.kind) {
    case 'user':
      return `**User**${i.command ? ` (/${inline(i.command.name)} ${inline(i.command.arguments)})` : ''}\n\n${fence(i.text)}\n`
    case 'steering':
      return `**User (steering)**\n\n${fence(i.text)}\n`
    case 'assistant':
      return `**Assistant**\n\n${prose(i.text)}\n`
    case 'reasoning':
      return `_Reasoning_\n\n${fence(i.text)}\n`
    case 'tool': {
      const status = !i.result ? 'no result' : i.result.ok ? 'ok' : 'error'
      const perm = i.permission
        ? `\nPermission: ${inline(`asked → ${i.permission.decision ?? 'no reply'}${i.permission.source ? ` (${i.permission.source})` : ''}`)}\n`
        : ''
      const result = i.result ? `\n${i.result.ok ? 'Output' : 'Error'}:\n\n${fence(i.result.text)}\n` : ''
      return `**Tool ${inline(i.tool)}** (${status})\n\n${fence(JSON.stringify(i.args, null, 2) ?? '{}', 'json')}\n${perm}${result}`
    }
    case 'diff':
      return `**Edit ${inline(i.path)}**\n\n${fence(i.diff, 'diff')}\n`
    case 'plan':
      return `**Plan**\n\n${i.entries.length ? i.entries.map((p) => `- [${p.status === 'completed' ? 'x' : ' '}] ${inline(p.content)}${p.status === 'in_progress' ? ' _(in progress)_' : ''}${p.priority === 'medium' ? '' : ` _(${p.priority})_`}`).join('\n') : '_(cleared)_'}\n`
    case 'notice':
      return `> ${inline(i.text)}\n${i.detail ? `\n${fence(i.detail)}\n` : ''}`
  }
}

/** The session as Markdown. */
export function renderMarkdown(detail: SessionDetail): string {
  const s = detail.summary
  const meta: [string, unknown][] = [
    ['Session', detail.session_id],
    ['Model', s.model],
    ['Started', s.started_at],
    ['Ended', s.ended_at],
    ['Result', s.success === true ? 'success' : s.success === false ? 'failed' : undefined],
    ['Steps', s.steps],
    ['Tool calls', s.tool_calls],
    ['Cost', s.cost_usd !== undefined ? `$${s.cost_usd}` : undefined],
  ]
  const lines = meta
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `- ${k}: ${inline(String(v))}`)
  const title = s.title
    ? inline(s.title)
    : s.prompt
      ? inline(s.prompt.split('\n')[0]!.slice(0, 200))
      : 'Chimera session'
  const turns = foldTranscript(detail.events).map(
    (t) =>
      `## Turn ${t.index + 1}${t.outcome ? ` (${t.outcome})` : ''}\n\n${t.items.map(itemMd).join('\n')}${usageLine(t.usage)}`,
  )
  return `# ${title}\n\n${lines.join('\n')}\n\n${turns.join('\n') || '_No turns yet._\n'}`
}
