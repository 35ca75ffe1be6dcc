/**
 * The console's session list: one row per session of `GET /sessions` with a short title (the
 * session's `title`, else the first prompt's first line, cut to TITLE_MAX characters; the full
 * prompt in the tooltip), its state (running, failed) and when it started, plus rename and
 * delete. Rename is `PATCH /sessions/{id}` (the title is the server's, shared by every client:
 * docs/decisions/0252-session-titles-on-the-server.md); delete is `DELETE /session/{id}` (two
 * clicks).
 */
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import { el } from './dom.ts'

export const TITLE_MAX = 80

export interface ListHooks {
  open(id: string): void
  remove(id: string): Promise<boolean>
  /** Sets (a blank title clears) the session's title on the server; the summary it answers, or undefined on failure. */
  rename(id: string, title: string): Promise<SessionSummary | undefined>
}

/** One line, at most `max` characters (an ellipsis marks a cut). */
export function shorten(text: string, max = TITLE_MAX): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line
}

export function titleOf(s: Pick<SessionSummary, 'session_id' | 'prompt' | 'title'>): string {
  if (s.title) return shorten(s.title)
  const first = (s.prompt ?? '').split('\n').find((l) => l.trim()) ?? ''
  return shorten(first) || s.session_id
}

function when(s: SessionSummary): string {
  const t = s.started_at ? Date.parse(s.started_at) : s.created_at ? s.created_at * 1000 : NaN
  if (!Number.isFinite(t)) return ''
  const d = new Date(t)
  const today = new Date().toDateString() === d.toDateString()
  return today
    ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleDateString([], { month: 'short', day: 'numeric' })
}

function badge(s: SessionSummary): HTMLElement | undefined {
  if (s.status === 'running') return el('span', { class: 'badge running', text: 'running' })
  if (s.success === false) return el('span', { class: 'badge failed', text: 'failed' })
  return undefined
}

export function renderList(
  list: HTMLElement,
  sessions: SessionSummary[],
  current: string | undefined,
  hooks: ListHooks,
): void {
  list.replaceChildren(...sessions.map((s) => row(s, s.session_id === current, hooks)))
  if (sessions.length === 0) list.append(el('li', { class: 'empty', text: 'No sessions yet.' }))
}

function row(s: SessionSummary, isCurrent: boolean, hooks: ListHooks): HTMLElement {
  const id = s.session_id
  const title = el('span', { class: 'title', text: titleOf(s) })
  const meta = el(
    'span',
    { class: 'meta' },
    ...[badge(s), el('span', { text: when(s) })].filter((n): n is HTMLElement => !!n),
  )
  const open = el(
    'button',
    { class: 'open', attrs: { type: 'button', title: s.prompt ? shorten(s.prompt, 600) : id } },
    title,
    meta,
  )
  open.addEventListener('click', () => hooks.open(id))
  const rename = el('button', {
    class: 'icon rename',
    text: '✎',
    attrs: { type: 'button', title: 'Rename', 'aria-label': 'Rename session' },
  })
  const del = el('button', {
    class: 'icon delete',
    text: '✕',
    attrs: { type: 'button', title: 'Delete', 'aria-label': 'Delete session' },
  })
  const li = el(
    'li',
    { class: isCurrent ? 'current' : '', attrs: { 'data-session': id } },
    open,
    el('span', { class: 'actions' }, rename, del),
  )
  rename.addEventListener('click', () => startRename(li, open, s, hooks))
  let armed: ReturnType<typeof setTimeout> | undefined
  del.addEventListener('click', () => {
    if (!armed) {
      // First click arms, second confirms (within 4 s).
      del.textContent = 'Delete?'
      del.classList.add('armed')
      armed = setTimeout(() => {
        armed = undefined
        del.textContent = '✕'
        del.classList.remove('armed')
      }, 4000)
      return
    }
    clearTimeout(armed)
    del.disabled = true
    void hooks.remove(id).then((ok) => {
      if (ok) li.remove()
      else del.disabled = false
    })
  })
  return li
}

function startRename(li: HTMLElement, open: HTMLElement, s: SessionSummary, hooks: ListHooks): void {
  if (li.querySelector('input.rename-input')) return
  const shown = titleOf(s)
  // Empty saves clear the title (the list then shows the first prompt again).
  const input = el('input', {
    class: 'rename-input',
    attrs: { type: 'text', 'aria-label': 'Session name', maxlength: '200', placeholder: shown },
  })
  input.value = s.title ?? shown
  open.hidden = true
  li.prepend(input)
  input.focus()
  input.select()
  let done = false
  const finish = (save: boolean): void => {
    if (done) return
    done = true
    const value = input.value.replace(/\s+/g, ' ').trim()
    // Nothing changed (a derived title left as shown is not a name).
    if (!save || value === (s.title ?? shown)) return restore()
    input.disabled = true
    void hooks.rename(s.session_id, value).then((summary) => {
      if (summary) {
        if (summary.title === undefined) delete s.title
        else s.title = summary.title
      }
      restore()
    })
  }
  const restore = (): void => {
    input.remove()
    open.hidden = false
    open.querySelector('.title')!.textContent = titleOf(s)
  }
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') finish(true)
    else if (e.key === 'Escape') finish(false)
  })
  input.addEventListener('blur', () => finish(true))
}
