/**
 * Transcripts: the HTML page escapes every piece of session content (checked with a real HTML
 * parser: no script element, no event-handler attribute, no javascript: or external URL, only
 * the page's own tags), stays self-contained and readable (tool calls collapsed, diffs as
 * diffs); the Markdown keeps verbatim content in unbreakable fences and neutralises raw HTML and
 * links; JSON is the session detail; a real session read back from the event log, read-only.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'parse5'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import { trackedTools } from '../core/fixtures/tracked-tools.ts'
import { openEventStore } from '../store/open.ts'
import { eventlogRoot } from '../store/paths.ts'
import { renderTranscript, readSessionDetail, type SessionDetail } from './transcript.ts'
import { fence } from './transcript-md.ts'

const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(2)>',
  "' onmouseover='alert(3)' x='",
  'javascript:alert(4)',
  '<a href="javascript:alert(5)">click</a>',
  '[click](javascript:alert(6))',
  '</pre></details></div><script>alert(7)</script>',
  '<svg onload=alert(8)><style>@import url(https://evil.example/x.css)</style>',
  '<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example">',
  '<!-- --><![CDATA[ x ]]>&amp;&lt;\u0000\ud800',
].join('\n')

const SID = 'otter-20260425T120300Z-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'

function ev(seq: number, turn: number, type: string, data: Record<string, unknown>): AnyEvent {
  return {
    seq,
    id: `evt-${seq}`,
    session_id: SID,
    type,
    turn,
    ts: '2026-04-25T12:03:00.000Z',
    data,
  } as unknown as AnyEvent
}

function hostileDetail(): SessionDetail {
  const h = HOSTILE
  const events: AnyEvent[] = [
    ev(1, 0, 'user_message', { message_id: 'm1', text: h, command: { name: h, arguments: h } }),
    ev(2, 0, 'turn_start', { prompt: h }),
    ev(3, 0, 'step_start', { step: 1 }),
    ev(4, 0, 'reasoning', { text: h }),
    ev(5, 0, 'text_delta', { text: h }),
    ev(6, 0, 'tool_call', { call_id: h, tool: h, args: { path: h, [h]: h } }),
    ev(7, 0, 'permission_request', { request_id: 'r1', call_id: h, tool: h, args: {}, options: ['allow'] }),
    ev(8, 0, 'permission_reply', { request_id: 'r1', decision: 'allow', source: h }),
    ev(9, 0, 'tool_result', { call_id: h, tool: h, ok: true, output: h }),
    ev(10, 0, 'tool_call', { call_id: 'c2', tool: 'Bash', args: { command: h } }),
    ev(11, 0, 'tool_result', { call_id: 'c2', tool: 'Bash', ok: false, error: h }),
    ev(12, 0, 'file_edit', { path: h, diff: `--- a/${h}\n+++ b/${h}\n@@ -1 +1 @@\n-${h}\n+${h}\n` }),
    ev(13, 0, 'notice', { level: 'warning', text: h }),
    ev(14, 0, 'sandbox_violation', { tool: h, path: h, mode: 'read-only' }),
    ev(15, 0, 'model_changed', { old: h, new: h }),
    ev(16, 0, 'compaction', { summary: h, messages_before: 3, messages_after: 1 }),
    ev(17, 0, 'error', { message: h, source: h }),
    ev(18, 1, 'steering', { text: h }),
    ev(19, 1, 'cancelled', { partial_output: h, reason: h }),
    ev(20, 1, 'undo', { turns: 1, files_restored: 0, remaining: 0, output: h }),
    ev(21, 1, 'session_renamed', { title: h }),
  ]
  return {
    session_id: SID,
    summary: {
      session_id: SID,
      title: h,
      prompt: h,
      model: h,
      working_dir: h,
      started_at: h,
      ended_at: h,
      success: false,
      cost_usd: 0,
    },
    events,
  }
}

type Node = {
  nodeName: string
  tagName?: string
  attrs?: { name: string; value: string }[]
  childNodes?: Node[]
  content?: Node
  value?: string
}
function walk(n: Node, visit: (n: Node) => void): void {
  visit(n)
  for (const c of n.childNodes ?? []) walk(c, visit)
  if (n.content) walk(n.content, visit)
}
const textOf = (n: Node): string =>
  n.nodeName === '#text' ? (n.value ?? '') : (n.childNodes ?? []).map(textOf).join('')

const PAGE_TAGS = new Set([
  'html',
  'head',
  'body',
  'meta',
  'title',
  'style',
  'main',
  'header',
  'h1',
  'h2',
  'dl',
  'dt',
  'dd',
  'section',
  'div',
  'details',
  'summary',
  'pre',
  'span',
  'footer',
  'p',
])

describe('the HTML transcript', () => {
  it('escapes hostile session content everywhere: a parser finds no script, handler, javascript: or external URL', () => {
    const { body, contentType } = renderTranscript(hostileDetail(), 'html')
    expect(contentType).toBe('text/html; charset=utf-8')
    const doc = parse(body) as unknown as Node
    const tags = new Set<string>()
    const problems: string[] = []
    let styles = 0
    let metas = 0
    walk(doc, (n) => {
      if (!n.tagName) return
      tags.add(n.tagName)
      if (n.tagName === 'style') styles++
      if (n.tagName === 'meta') metas++
      for (const a of n.attrs ?? []) {
        if (/^on/i.test(a.name)) problems.push(`handler ${a.name} on <${n.tagName}>`)
        if (/javascript:/i.test(a.value)) problems.push(`javascript: in ${a.name}`)
        if (/^(href|src|action|formaction|srcset|xlink:href|background|poster|data)$/i.test(a.name))
          problems.push(`${a.name} on <${n.tagName}>`)
        if (/https?:/i.test(a.value)) problems.push(`URL in ${a.name}`)
        if (a.name === 'http-equiv' && a.value.toLowerCase() !== 'content-security-policy')
          problems.push(`http-equiv=${a.value}`)
      }
    })
    expect(problems).toEqual([])
    expect([...tags].filter((t) => !PAGE_TAGS.has(t))).toEqual([])
    expect(styles).toBe(1)
    expect(metas).toBe(4)
    const style = body.slice(body.indexOf('<style>'), body.indexOf('</style>'))
    expect(style).not.toMatch(/url\(|@import|https?:/)
    // The content survives as text, byte for byte (NUL and a lone surrogate become U+FFFD).
    const text = textOf(doc)
    const expected = HOSTILE.replace('\u0000', '\uFFFD').replace('\ud800', '\uFFFD')
    expect(text.split(expected).length - 1).toBeGreaterThanOrEqual(10)
    expect(body).toContain("content=\"default-src 'none'; style-src 'unsafe-inline'")
  })

  it('is readable: tool calls collapsed in <details>, file edits shown as classed diff lines', () => {
    const detail: SessionDetail = {
      session_id: SID,
      summary: {
        session_id: SID,
        prompt: 'fix the bug',
        model: 'offline',
        success: true,
        cost_usd: 0,
        steps: 2,
        tool_calls: 1,
      },
      events: [
        ev(1, 0, 'user_message', { message_id: 'm1', text: 'fix the bug' }),
        ev(2, 0, 'step_start', { step: 1 }),
        ev(3, 0, 'text_delta', { text: 'Let me ' }),
        ev(4, 0, 'text_delta', { text: 'look.' }),
        ev(5, 0, 'tool_call', {
          call_id: 'c1',
          tool: 'Edit',
          args: { path: 'a.txt', old_string: 'x', new_string: 'y' },
        }),
        ev(6, 0, 'tool_result', {
          call_id: 'c1',
          tool: 'Edit',
          ok: true,
          output: 'Edited a.txt: 1 replacement',
          duration_ms: 3,
        }),
        ev(7, 0, 'file_edit', { path: 'a.txt', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n' }),
        ev(8, 0, 'usage', { usage: { input_tokens: 10, output_tokens: 5, cost_usd: 0 } }),
        ev(9, 0, 'agent_result', { success: true, output: 'done' }),
      ],
    }
    const doc = parse(renderTranscript(detail, 'html').body) as unknown as Node
    const details: Node[] = []
    const spans: [string, string][] = []
    const msgs: string[] = []
    walk(doc, (n) => {
      const cls = n.attrs?.find((a) => a.name === 'class')?.value
      if (n.tagName === 'details') details.push(n)
      if (n.tagName === 'span' && cls && ['add', 'del', 'hunk', 'file', 'ctx'].includes(cls))
        spans.push([cls, textOf(n)])
      if (n.tagName === 'div' && cls === 'text') msgs.push(textOf(n))
    })
    const tool = details.find((d) => d.attrs?.some((a) => a.name === 'class' && a.value === 'tool'))!
    expect(tool.attrs?.some((a) => a.name === 'open')).toBe(false)
    expect(textOf(tool.childNodes!.find((c) => c.tagName === 'summary')!)).toBe('Edit a.txt — ok')
    expect(spans).toEqual([
      ['file', '--- a/a.txt'],
      ['file', '+++ b/a.txt'],
      ['hunk', '@@ -1 +1 @@'],
      ['del', '-x'],
      ['add', '+y'],
    ])
    expect(msgs).toEqual(['fix the bug', 'Let me look.'])
  })
})

describe('the Markdown and JSON transcripts', () => {
  it('keeps verbatim content fenced and neutralises raw HTML and links in prose', () => {
    const md = renderTranscript(hostileDetail(), 'md').body
    // Outside the fenced blocks (which a Markdown renderer shows as literal code) no HTML or link survives.
    const prose: string[] = []
    let open: string | undefined
    for (const line of md.split('\n')) {
      if (open) {
        if (line === open) open = undefined
      } else if (/^`{3,}/.test(line)) open = /^`+/.exec(line)![0]
      else prose.push(line)
    }
    expect(open).toBeUndefined()
    const outside = prose.join('\n')
    expect(outside).toContain('alert(1)')
    expect(outside).not.toMatch(/<script|<img|<svg|<a |<base|<meta|<style/i)
    expect(outside).not.toMatch(/(?<!\\)\[click(?<!\\)\]\(/)
    expect(md).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    const tricky = 'before\n```\n<script>x</script>\n````\nafter'
    const f = fence(tricky)
    expect(f.startsWith('`````\n')).toBe(true)
    expect(f.endsWith('\n`````')).toBe(true)
    expect(f.slice(6, -6)).toBe(tricky)
  })

  it('JSON is the session detail', () => {
    const d = hostileDetail()
    const { body, contentType } = renderTranscript(d, 'json')
    expect(contentType).toBe('application/json')
    expect(JSON.parse(body)).toEqual(JSON.parse(JSON.stringify(d)))
  })
})

describe('a real session', () => {
  let env: TestEnv
  beforeEach(() => {
    env = testEnv('chimera-transcript-')
  })
  afterEach(async () => {
    await env.cleanup()
  })

  it('is read back from the event log without touching it, and renders its edit as a diff', async () => {
    const s = await env.manager({ tools: trackedTools() }).create()
    await within(s.prompt('!call Write {"path":"a.txt","content":"one\\n"}').done, 10_000, 'write')
    await within(s.prompt('!call Edit {"path":"a.txt","old_string":"one","new_string":"two"}').done, 10_000, 'edit')
    await s.flush()
    const root = eventlogRoot(env.home)
    const before = readdirSync(join(root, s.id)).sort()
    const detail = await readSessionDetail(openEventStore(env.home), s.id)
    expect(readdirSync(join(root, s.id)).sort()).toEqual(before)
    expect(detail.events.map((e) => e.seq)).toEqual(detail.events.map((_, i) => i + 1))
    expect(detail.summary.session_id).toBe(s.id)
    const html = renderTranscript(detail, 'html').body
    expect(html).toContain('<span class="del">-one</span><span class="add">+two</span>')
    expect(renderTranscript(detail, 'md').body).toContain(
      '**Edit a.txt**\n\n```diff\n===================================================================\n--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n```',
    )
    await expect(readSessionDetail(openEventStore(env.home), 'otter-nope')).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'session_not_found' }),
    )
    await expect(readSessionDetail(openEventStore(env.home), '../../etc')).rejects.toMatchObject({
      code: 'session_not_found',
    })
  })
})
