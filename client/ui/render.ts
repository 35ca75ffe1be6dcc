/**
 * Renders a session's events into the console: messages, streamed text (Markdown, sanitized),
 * reasoning (consecutive chunks in one block), tool cards (call, permission prompt, live output,
 * result), diffs, turn markers (finished, failed, cancelled), undo/redo lines and the running
 * cost. One View per shown session; `add` takes the events in stream order.
 */
import { endsTurn } from '../../generated/event-facts.gen.ts'
import type { PermissionDecision, SessionStreamEvent } from '../index.ts'
import { el } from './dom.ts'
import { renderMarkdown } from './markdown.ts'

/** Live tool output kept on the page per call (the tool result carries the tail in the end). */
const LIVE_MAX = 64 * 1024
/** A user message longer than this starts folded. */
const FOLD_AT = 600

export interface ViewHooks {
  /** Answer a permission request (the console posts it to /tool/approve). */
  answer(requestId: string, decision: PermissionDecision): Promise<void>
  /** The session was renamed (`session_renamed`): its new title, or null when cleared. */
  titled?(title: string | null): void
}

export class View {
  readonly #root: HTMLElement
  readonly #hooks: ViewHooks
  readonly #cards = new Map<string, HTMLElement>()
  readonly #prompts = new Map<string, HTMLElement>()
  #text: { node: HTMLElement; raw: string; queued: boolean } | undefined
  #reasoning: HTMLElement | undefined
  #turnFailed = false
  #scrollQueued = false
  #turnCost = 0
  #sessionCost = 0
  #tokens = 0
  #costKnown = true
  running = false
  /** Events shown so far (0 until the stream's replay starts). */
  seen = 0

  constructor(root: HTMLElement, hooks: ViewHooks) {
    this.#root = root
    this.#hooks = hooks
    root.replaceChildren()
  }

  /** `$0.0123 · 456 tokens`, or `cost unknown` when a model has no price. */
  get cost(): string {
    const usd = this.#sessionCost + this.#turnCost
    return `${this.#costKnown ? `$${usd.toFixed(4)}` : 'cost unknown'} · ${this.#tokens} tokens`
  }

  add(ev: SessionStreamEvent): void {
    this.seen++
    if (ev.type !== 'text_delta' && ev.type !== 'usage') this.#flushText()
    if (ev.type !== 'reasoning' && ev.type !== 'usage') this.#reasoning = undefined
    switch (ev.type) {
      case 'user_message':
        this.running = true
        this.#turnFailed = false
        this.#push(userMessage(ev.metadata.text, ev.seq))
        break
      case 'text_delta':
        if (!this.#text)
          this.#text = { node: this.#push(el('div', { class: 'msg assistant markdown' })), raw: '', queued: false }
        this.#text.raw += ev.metadata.text
        this.#scheduleText()
        break
      case 'reasoning':
        if (!this.#reasoning) {
          const body = el('div', { class: 'body' })
          this.#push(
            el('details', { class: 'reasoning', attrs: { open: '' } }, el('summary', { text: 'Thinking' }), body),
          )
          this.#reasoning = body
        }
        this.#reasoning.append(ev.metadata.text)
        break
      case 'tool_call':
        this.#cards.set(
          ev.metadata.call_id,
          this.#push(toolCard(ev.metadata.call_id, ev.metadata.tool, ev.metadata.args)),
        )
        break
      case 'permission_request':
        this.#permission(ev.metadata.request_id, ev.metadata.call_id, ev.metadata.tool, ev.metadata.options)
        break
      case 'permission_reply': {
        const box = this.#prompts.get(ev.metadata.request_id)
        if (box) {
          for (const b of box.querySelectorAll('button')) b.disabled = true
          box.append(el('span', { class: 'answered', text: `answered: ${ev.metadata.decision}` }))
        }
        break
      }
      case 'tool_start':
        this.#state(ev.metadata.call_id, 'running')
        this.#cards.get(ev.metadata.call_id)?.classList.add('running')
        break
      case 'tool_progress':
        this.#progress(
          ev.metadata.call_id,
          ev.metadata.stdout ?? '',
          ev.metadata.stderr ?? '',
          ev.metadata.truncated === true,
        )
        break
      case 'tool_result': {
        const card = this.#cards.get(ev.metadata.call_id)
        const took = ev.metadata.duration_ms === undefined ? '' : ` · ${(ev.metadata.duration_ms / 1000).toFixed(1)} s`
        this.#state(
          ev.metadata.call_id,
          ev.metadata.ok ? `done${took}` : `failed${took}${ev.metadata.error ? `: ${ev.metadata.error}` : ''}`,
        )
        card?.classList.remove('running')
        card?.classList.add(ev.metadata.ok ? 'ok' : 'failed')
        if (card && ev.metadata.output) {
          // The result's output is the final word: it replaces what was streamed.
          const out = card.querySelector<HTMLElement>('pre.output') ?? card.appendChild(el('pre', { class: 'output' }))
          out.classList.remove('live')
          out.textContent = ev.metadata.output
        }
        break
      }
      case 'file_edit':
        this.#push(
          el(
            'div',
            { class: 'card diff-card' },
            el('h3', { text: `edited ${ev.metadata.path}` }),
            diff(ev.metadata.diff),
          ),
        )
        break
      case 'usage':
        this.#turnCost = ev.metadata.usage.cost_usd ?? 0
        if (ev.metadata.usage.cost_usd === null) this.#costKnown = false
        break
      case 'agent_result':
        this.#sessionCost += ev.metadata.usage?.cost_usd ?? this.#turnCost
        this.#tokens +=
          ev.metadata.usage?.total_tokens ??
          (ev.metadata.usage ? ev.metadata.usage.input_tokens + ev.metadata.usage.output_tokens : 0)
        this.#turnCost = 0
        if (ev.metadata.success) this.#push(el('div', { class: 'result ok', text: 'turn finished' }))
        else if (!this.#turnFailed) this.#failed('the agent did not finish the task')
        break
      case 'error':
        this.#failed(ev.metadata.message)
        break
      case 'cancelled':
        this.#push(el('div', { class: 'result cancelled', text: 'turn cancelled' }))
        break
      case 'undo':
      case 'redo':
        this.#push(el('div', { class: `msg notice ${ev.type}`, text: ev.metadata.output }))
        break
      case 'notice':
        this.#push(el('div', { class: 'msg notice', text: `${ev.metadata.level}: ${ev.metadata.text}` }))
        break
      case 'session_renamed':
        this.#push(
          el('div', {
            class: 'msg notice renamed',
            text: ev.metadata.title === null ? 'title cleared' : `renamed: ${ev.metadata.title}`,
          }),
        )
        this.#hooks.titled?.(ev.metadata.title)
        break
      case 'plan': {
        // Each plan is the complete list: show it as one block (a new turn's plan starts a new one).
        const marks = { completed: '[x]', in_progress: '[~]', pending: '[ ]' }
        const text = ev.metadata.entries.map((p) => `${marks[p.status]} ${p.content}`).join('\n') || '(plan cleared)'
        this.#push(el('pre', { class: 'card plan', text: `plan\n${text}` }))
        break
      }
      case 'sandbox_violation':
        this.#push(
          el('div', {
            class: 'msg notice warning',
            text: `sandbox (${ev.metadata.mode}) refused ${ev.metadata.tool} on ${ev.metadata.path}`,
          }),
        )
        break
      case 'model_changed':
      case 'mode_changed':
      case 'approval_changed':
        this.#push(
          el('div', {
            class: 'msg notice',
            text: `${ev.type.replace('_changed', '')}: ${ev.metadata.old} → ${ev.metadata.new}`,
          }),
        )
        break
      case 'compaction':
        this.#push(
          el('div', {
            class: 'msg notice',
            text: `history compacted: ${ev.metadata.messages_before} → ${ev.metadata.messages_after} messages`,
          }),
        )
        break
      case 'steering':
        this.#push(userMessage(ev.metadata.text, ev.seq))
        break
      case 'file_open':
        this.#push(
          el('div', {
            class: 'msg notice',
            text: `open ${ev.metadata.path}${ev.metadata.line !== undefined ? `:${ev.metadata.line}` : ''}`,
          }),
        )
        break
      // Structure only: the turn and step boundaries show through the events inside them.
      case 'turn_start':
      case 'step_start':
      case 'step_end':
      case 'turn_end':
        break
      default: {
        // Every event type of the spec has a case above; a new one fails to compile here.
        const unhandled: never = ev
        void unhandled
      }
    }
    if (endsTurn(ev.type)) {
      this.running = false
      for (const [id, box] of this.#prompts) if (!box.querySelector('.answered')) this.#prompts.delete(id)
    }
  }

  /** The red marker of a failed turn (one per turn: an `error` and a failed result share it). */
  #failed(reason: string): void {
    this.#turnFailed = true
    this.#push(
      el(
        'div',
        { class: 'result failed', attrs: { role: 'status' } },
        el('strong', { text: 'Turn failed' }),
        el('span', { text: reason }),
      ),
    )
  }

  #scheduleText(): void {
    const t = this.#text!
    if (t.queued) return
    t.queued = true
    // One Markdown render per frame however many deltas arrive in it.
    requestAnimationFrame(() => {
      t.queued = false
      this.#keepBottom()
      t.node.replaceChildren(renderMarkdown(t.raw))
    })
  }

  #flushText(): void {
    const t = this.#text
    if (!t) return
    this.#text = undefined
    if (t.queued) {
      t.queued = false
      t.node.replaceChildren(renderMarkdown(t.raw))
    }
  }

  #progress(callId: string, stdout: string, stderr: string, truncated: boolean): void {
    const card = this.#cards.get(callId)
    if (!card) return
    let out = card.querySelector<HTMLElement>('pre.output')
    if (!out) out = card.appendChild(el('pre', { class: 'output live' }))
    if (stdout) out.append(stdout)
    if (stderr) out.append(el('span', { class: 'stderr', text: stderr }))
    if ((out.textContent?.length ?? 0) > LIVE_MAX) {
      out.normalize()
      out.textContent = `…${(out.textContent ?? '').slice(-LIVE_MAX)}`
    }
    if (truncated) card.append(el('div', { class: 'note', text: 'output continues; the result keeps its tail' }))
    this.#keepBottom()
    out.scrollTop = out.scrollHeight
    this.#state(callId, 'running…')
  }

  #push<T extends HTMLElement>(node: T): T {
    this.#keepBottom()
    this.#root.append(node)
    return node
  }

  /**
   * Call before adding content: if the reader is at the bottom now, the view follows the new
   * content at the next frame (one layout read per frame, however many events a replay adds).
   */
  #keepBottom(): void {
    if (this.#scrollQueued) return
    this.#scrollQueued = true
    const follow = atBottom(this.#root)
    requestAnimationFrame(() => {
      this.#scrollQueued = false
      if (follow) toBottom(this.#root)
    })
  }

  #state(callId: string, text: string): void {
    const s = this.#cards.get(callId)?.querySelector('.state')
    if (s) s.textContent = text
  }

  #permission(requestId: string, callId: string, tool: string, options: PermissionDecision[]): void {
    const box = el(
      'div',
      { class: 'permission', attrs: { 'data-request': requestId } },
      el('strong', { text: `${tool} asks for permission` }),
      el('br'),
    )
    for (const option of options) {
      const b = el('button', { text: option, attrs: { type: 'button', 'data-decision': option } })
      b.addEventListener('click', () => {
        for (const x of box.querySelectorAll('button')) x.disabled = true
        this.#hooks.answer(requestId, option).catch(() => {
          for (const x of box.querySelectorAll('button')) x.disabled = false
        })
      })
      box.append(b)
    }
    this.#prompts.set(requestId, box)
    const card = this.#cards.get(callId)
    if (card) card.append(box)
    else this.#push(box)
  }
}

/**
 * What scrolls the events: the list itself in the two-column layout, the page on a phone. New
 * content keeps the view at the bottom only when it was there: a person reading back stays put.
 */
function scroller(root: HTMLElement): Element {
  return getComputedStyle(root).overflowY === 'auto' ? root : (document.scrollingElement ?? document.documentElement)
}

function atBottom(root: HTMLElement): boolean {
  const s = scroller(root)
  return s.scrollHeight - s.scrollTop - s.clientHeight < 120
}

function toBottom(root: HTMLElement): void {
  const s = scroller(root)
  s.scrollTop = s.scrollHeight
}

/** A tool call's card: the tool, the gist of its arguments (command or path), the full arguments folded. */
function toolCard(callId: string, tool: string, args: Record<string, unknown>): HTMLElement {
  const gist = ['command', 'path', 'file_path', 'pattern', 'url', 'query']
    .map((k) => args[k])
    .find((v): v is string => typeof v === 'string')
  const json = JSON.stringify(args, null, 2)
  const head = el('div', { class: 'head' }, el('h3', { text: tool }), el('span', { class: 'state', text: 'requested' }))
  const card = el('div', { class: 'card tool', attrs: { 'data-call': callId } }, head)
  if (gist !== undefined) {
    card.append(el('code', { class: 'gist', text: gist }))
    card.append(
      el('details', { class: 'args' }, el('summary', { text: 'arguments' }), el('pre', { class: 'args', text: json })),
    )
  } else card.append(el('pre', { class: 'args', text: json }))
  return card
}

/** The user's message as text; a long one starts folded, with a toggle. */
function userMessage(text: string, seq: number): HTMLElement {
  const node = el('div', { class: 'msg user', attrs: { 'data-seq': String(seq) } }, el('div', { class: 'text', text }))
  if (text.length > FOLD_AT) {
    node.classList.add('folded')
    const toggle = el('button', { class: 'link fold', text: 'Show all', attrs: { type: 'button' } })
    toggle.addEventListener('click', () => {
      toggle.textContent = node.classList.toggle('folded') ? 'Show all' : 'Show less'
    })
    node.append(toggle)
  }
  return node
}

/** A unified diff, one span per line, coloured by its first character. */
function diff(text: string): HTMLElement {
  const pre = el('pre', { class: 'diff' })
  for (const line of text.split('\n')) {
    const cls =
      line.startsWith('+++') || line.startsWith('---')
        ? 'file'
        : line.startsWith('@@')
          ? 'hunk'
          : line.startsWith('+')
            ? 'add'
            : line.startsWith('-')
              ? 'del'
              : 'ctx'
    pre.append(el('span', { class: cls, text: line }), '\n')
  }
  return pre
}
