/**
 * A session's events folded into what a reader follows: turns, each a list of items — the
 * user's message, the assistant's text and reasoning (streamed chunks joined), tool calls with
 * their permission round-trip and result, file diffs, plans (each the complete list), and notices (errors, cancels, undo/redo,
 * compaction, switches). Token usage is summed per turn. The HTML and Markdown renderings are
 * both views of this model; neither escapes here (the renderers do).
 */
import type { PlanData, Usage } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { addUsage, zeroUsage } from '../core/state.ts'

export type { SessionDetail } from '../store/types.ts'

export interface ToolItem {
  kind: 'tool'
  callId: string
  tool: string
  args: Record<string, unknown>
  permission?: { decision?: string; source?: string; risk?: string }
  result?: { ok: boolean; text: string; durationMs?: number }
}

export type Item =
  | { kind: 'user'; text: string; command?: { name: string; arguments: string } }
  | { kind: 'steering'; text: string }
  | { kind: 'assistant'; text: string }
  | { kind: 'reasoning'; text: string }
  | ToolItem
  | { kind: 'diff'; path: string; diff: string }
  | { kind: 'notice'; level: 'info' | 'warning' | 'error'; text: string; detail?: string }
  | { kind: 'plan'; entries: PlanData['entries'] }

export interface Turn {
  index: number
  items: Item[]
  usage?: Usage
  /** How the turn ended: `success`, `failed`, `cancelled`, or undefined while open. */
  outcome?: 'success' | 'failed' | 'cancelled'
}

/** Fold the events (in seq order) into turns. */
export function foldTranscript(events: readonly AnyEvent[]): Turn[] {
  const turns = new Map<number, Turn>()
  const tools = new Map<string, ToolItem>()
  const requests = new Map<string, ToolItem>()
  const turnOf = (e: AnyEvent): Turn => {
    let t = turns.get(e.turn)
    if (!t) turns.set(e.turn, (t = { index: e.turn, items: [] }))
    return t
  }
  /** Append text to the turn's last item when it is of the same streamed kind. */
  const stream = (t: Turn, kind: 'assistant' | 'reasoning', text: string): void => {
    const last = t.items.at(-1)
    if (last && last.kind === kind) last.text += text
    else t.items.push({ kind, text })
  }
  const notice = (e: AnyEvent, level: 'info' | 'warning' | 'error', text: string, detail?: string) =>
    turnOf(e).items.push({ kind: 'notice', level, text, ...(detail !== undefined ? { detail } : {}) })

  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    const t = turnOf(e)
    switch (e.type) {
      case 'user_message':
        t.items.push({ kind: 'user', text: e.data.text, ...(e.data.command ? { command: e.data.command } : {}) })
        break
      case 'steering':
        t.items.push({ kind: 'steering', text: e.data.text })
        break
      case 'text_delta':
        stream(t, 'assistant', e.data.text)
        break
      case 'reasoning':
        stream(t, 'reasoning', e.data.text)
        break
      case 'step_start':
      case 'step_end':
        // A new step starts a new assistant block.
        t.items.push({ kind: 'assistant', text: '' })
        break
      case 'tool_call': {
        const item: ToolItem = { kind: 'tool', callId: e.data.call_id, tool: e.data.tool, args: e.data.args }
        tools.set(e.data.call_id, item)
        t.items.push(item)
        break
      }
      case 'permission_request': {
        const item = tools.get(e.data.call_id)
        if (item) {
          item.permission = { ...(e.data.risk ? { risk: e.data.risk } : {}) }
          requests.set(e.data.request_id, item)
        }
        break
      }
      case 'permission_reply': {
        const item = requests.get(e.data.request_id)
        if (item?.permission)
          Object.assign(item.permission, {
            decision: e.data.decision,
            ...(e.data.source ? { source: e.data.source } : {}),
          })
        break
      }
      case 'tool_result': {
        let item = tools.get(e.data.call_id)
        if (!item) t.items.push((item = { kind: 'tool', callId: e.data.call_id, tool: e.data.tool, args: {} }))
        item.result = {
          ok: e.data.ok,
          text: e.data.ok ? (e.data.output ?? '') : (e.data.error ?? 'failed'),
          ...(e.data.duration_ms !== undefined ? { durationMs: e.data.duration_ms } : {}),
        }
        break
      }
      case 'file_edit':
        t.items.push({ kind: 'diff', path: e.data.path, diff: e.data.diff })
        break
      case 'plan':
        t.items.push({ kind: 'plan', entries: e.data.entries })
        break
      case 'usage':
        t.usage = addUsage(t.usage ?? zeroUsage(), e.data.usage)
        break
      case 'agent_result':
        t.outcome = e.data.success ? 'success' : 'failed'
        break
      case 'error':
        t.outcome = 'failed'
        notice(e, 'error', `Error${e.data.source ? ` (${e.data.source})` : ''}: ${e.data.message}`)
        break
      case 'cancelled':
        t.outcome = 'cancelled'
        notice(
          e,
          'warning',
          `Cancelled${e.data.reason ? `: ${e.data.reason}` : ''}`,
          e.data.partial_output || undefined,
        )
        break
      case 'undo':
      case 'redo':
        notice(e, 'info', e.data.output)
        break
      case 'compaction':
        notice(
          e,
          'info',
          `History compacted: ${e.data.messages_before} messages → ${e.data.messages_after}`,
          e.data.summary,
        )
        break
      case 'model_changed':
        notice(e, 'info', `Model: ${e.data.old} → ${e.data.new}`)
        break
      case 'mode_changed':
        notice(e, 'info', `Mode: ${e.data.old} → ${e.data.new}`)
        break
      case 'approval_changed':
        notice(e, 'info', `Approval: ${e.data.old} → ${e.data.new}`)
        break
      case 'session_renamed':
        notice(e, 'info', e.data.title === null ? 'Title cleared' : `Renamed: ${e.data.title}`)
        break
      case 'sandbox_violation':
        notice(e, 'warning', `Sandbox (${e.data.mode}) refused ${e.data.tool} on ${e.data.path}`)
        break
      case 'notice':
        notice(e, e.data.level, e.data.text)
        break
      case 'file_open':
        notice(e, 'info', `Opened ${e.data.path}${e.data.line !== undefined ? `:${e.data.line}` : ''}`)
        break
      // Not in a transcript: turn boundaries are the turns themselves; a tool's start and live
      // output are superseded by its result.
      case 'turn_start':
      case 'turn_end':
      case 'tool_start':
      case 'tool_progress':
        break
      default: {
        // Every event type of the spec has a case above; a new one fails to compile here.
        const unhandled: never = e
        void unhandled
      }
    }
  }
  const out = [...turns.values()].sort((a, b) => a.index - b.index)
  for (const t of out)
    t.items = t.items.filter((i) => !(i.kind === 'assistant' || i.kind === 'reasoning') || i.text.trim() !== '')
  return out
}
