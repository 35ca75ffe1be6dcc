/**
 * Renders a session's events into the console: messages, streamed text, reasoning, tool cards
 * (call, permission prompt, result), diffs, undo/redo lines and the running cost. One View per
 * shown session; `add` takes the events in stream order.
 */
import type { PermissionDecision, SessionStreamEvent } from '../index.ts'
import { el } from './dom.ts'

export interface ViewHooks {
  /** Answer a permission request (the console posts it to /tool/approve). */
  answer(requestId: string, decision: PermissionDecision): Promise<void>
}

const TERMINAL = new Set(['agent_result', 'error', 'cancelled'])

export class View {
  readonly #root: HTMLElement
  readonly #hooks: ViewHooks
  readonly #cards = new Map<string, HTMLElement>()
  readonly #prompts = new Map<string, HTMLElement>()
  #text: HTMLElement | undefined
  #turnCost = 0
  #sessionCost = 0
  #tokens = 0
  #costKnown = true
  running = false

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
    if (ev.type !== 'text_delta') this.#text = undefined
    switch (ev.type) {
      case 'user_message':
        this.running = true
        this.#push(el('div', { class: 'msg user', text: ev.metadata.text, attrs: { 'data-seq': String(ev.seq) } }))
        break
      case 'text_delta':
        if (!this.#text) this.#text = this.#push(el('div', { class: 'msg assistant' }))
        this.#text.append(ev.metadata.text)
        break
      case 'reasoning':
        this.#push(el('div', { class: 'msg reasoning', text: ev.metadata.text }))
        break
      case 'tool_call':
        this.#cards.set(
          ev.metadata.call_id,
          this.#push(el('div', { class: 'card', attrs: { 'data-call': ev.metadata.call_id } }, el('h3', { text: ev.metadata.tool }), el('pre', { class: 'args', text: JSON.stringify(ev.metadata.args, null, 2) }), el('div', { class: 'state', text: 'requested' }))),
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
        break
      case 'tool_result': {
        const card = this.#cards.get(ev.metadata.call_id)
        this.#state(ev.metadata.call_id, ev.metadata.ok ? 'done' : `failed: ${ev.metadata.error ?? ''}`)
        card?.classList.add(ev.metadata.ok ? 'ok' : 'failed')
        if (card && ev.metadata.output) card.append(el('pre', { class: 'output', text: ev.metadata.output }))
        break
      }
      case 'file_edit':
        this.#push(el('div', { class: 'card diff-card' }, el('h3', { text: `edited ${ev.metadata.path}` }), diff(ev.metadata.diff)))
        break
      case 'usage':
        this.#turnCost = ev.metadata.usage.cost_usd ?? 0
        if (ev.metadata.usage.cost_usd === null) this.#costKnown = false
        break
      case 'agent_result':
        this.#sessionCost += ev.metadata.usage?.cost_usd ?? this.#turnCost
        this.#tokens += ev.metadata.usage?.total_tokens ?? (ev.metadata.usage ? ev.metadata.usage.input_tokens + ev.metadata.usage.output_tokens : 0)
        this.#turnCost = 0
        this.#push(el('div', { class: 'result', text: ev.metadata.success ? 'turn finished' : 'turn failed' }))
        break
      case 'error':
        this.#push(el('div', { class: 'msg error', text: `error: ${ev.metadata.message}` }))
        break
      case 'cancelled':
        this.#push(el('div', { class: 'msg notice', text: 'cancelled' }))
        break
      case 'undo':
      case 'redo':
        this.#push(el('div', { class: `msg notice ${ev.type}`, text: ev.metadata.output }))
        break
      case 'notice':
        this.#push(el('div', { class: 'msg notice', text: `${ev.metadata.level}: ${ev.metadata.text}` }))
        break
      case 'plan': {
        // Each plan is the complete list: show it as one block (a new turn's plan starts a new one).
        const marks = { completed: '[x]', in_progress: '[~]', pending: '[ ]' }
        const text = ev.metadata.entries.map((p) => `${marks[p.status]} ${p.content}`).join('\n') || '(plan cleared)'
        this.#push(el('pre', { class: 'card plan', text: `plan\n${text}` }))
        break
      }
      default:
        break
    }
    if (TERMINAL.has(ev.type)) {
      this.running = false
      for (const [id, box] of this.#prompts) if (!box.querySelector('.answered')) this.#prompts.delete(id)
    }
  }

  #push<T extends HTMLElement>(node: T): T {
    this.#root.append(node)
    node.scrollIntoView?.({ block: 'end' })
    return node
  }

  #state(callId: string, text: string): void {
    const s = this.#cards.get(callId)?.querySelector('.state')
    if (s) s.textContent = text
  }

  #permission(requestId: string, callId: string, tool: string, options: PermissionDecision[]): void {
    const box = el('div', { class: 'permission', attrs: { 'data-request': requestId } }, el('strong', { text: `${tool} asks for permission` }), el('br'))
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

/** A unified diff, one span per line, coloured by its first character. */
function diff(text: string): HTMLElement {
  const pre = el('pre', { class: 'diff' })
  for (const line of text.split('\n')) {
    const cls = line.startsWith('+++') || line.startsWith('---') ? 'file' : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx'
    pre.append(el('span', { class: cls, text: line }), '\n')
  }
  return pre
}
