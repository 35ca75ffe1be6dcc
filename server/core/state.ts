/**
 * A session's state is a fold over its events: the conversation history the model sees, the
 * current model and mode, and the summary kept on disk. The live session and a session loaded
 * from disk run the same reducer, so a reload rebuilds exactly what was there.
 */
import type { ChatMessage, SessionSummary, Usage } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from './events.ts'

export interface SessionState {
  messages: ChatMessage[]
  model: string
  mode: string
  /** The approval policy, as created and as changed by `approval_changed` events. */
  approval?: string
  /** Turns started so far (the next turn's index). */
  turns: number
  lastSeq: number
  summary: SessionSummary
  /** The assistant message being streamed in the current step, if any. */
  open?: ChatMessage
}

const ZERO: Usage = { input_tokens: 0, output_tokens: 0, cache_tokens: 0, reasoning_tokens: 0, total_tokens: 0, cost_usd: 0 }

export function initialState(init: { session_id: string; model: string; mode: string; created_at: string; working_dir: string; approval?: string }): SessionState {
  return {
    messages: [],
    model: init.model,
    mode: init.mode,
    ...(init.approval ? { approval: init.approval } : {}),
    turns: 0,
    lastSeq: 0,
    summary: {
      session_id: init.session_id,
      started_at: init.created_at,
      ended_at: null,
      model: init.model,
      prompt: '',
      success: null,
      cost_usd: 0,
      steps: 0,
      tool_calls: 0,
      usage: { ...ZERO },
      working_dir: init.working_dir,
      event_count: 0,
    },
  }
}

function assistant(s: SessionState): ChatMessage {
  if (!s.open) {
    s.open = { role: 'assistant', content: '' }
    s.messages.push(s.open)
  }
  return s.open
}

/** Apply one event to the state (mutates and returns it). */
export function reduce(s: SessionState, e: AnyEvent): SessionState {
  s.lastSeq = e.seq
  s.summary.event_count = e.seq
  switch (e.type) {
    case 'user_message':
      s.open = undefined
      s.messages.push({ role: 'user', content: e.data.text })
      break
    case 'steering':
      s.open = undefined
      s.messages.push({ role: 'user', content: e.data.text })
      break
    case 'turn_start':
      s.turns = e.turn + 1
      if (!s.summary.prompt) s.summary.prompt = e.data.prompt
      s.summary.model = s.model
      s.summary.ended_at = null
      s.summary.success = null
      break
    case 'step_start':
      s.open = undefined
      s.summary.steps = (s.summary.steps ?? 0) + 1
      break
    case 'text_delta':
      assistant(s).content += e.data.text
      break
    case 'tool_call': {
      const m = assistant(s)
      m.tool_calls = [...(m.tool_calls ?? []), { call_id: e.data.call_id, tool: e.data.tool, args: e.data.args }]
      s.summary.tool_calls = (s.summary.tool_calls ?? 0) + 1
      break
    }
    case 'tool_result': {
      const d = e.data
      s.messages.push({
        role: 'tool',
        content: d.ok ? (d.output ?? '') : (d.error ?? 'failed'),
        tool_result: { call_id: d.call_id, tool: d.tool, ok: d.ok, ...(d.output !== undefined ? { output: d.output } : {}), ...(d.error !== undefined ? { error: d.error } : {}) },
      })
      break
    }
    case 'step_end':
      s.open = undefined
      break
    case 'usage': {
      const u = s.summary.usage ?? { ...ZERO }
      const add = e.data.usage
      s.summary.usage = {
        input_tokens: u.input_tokens + add.input_tokens,
        output_tokens: u.output_tokens + add.output_tokens,
        cache_tokens: (u.cache_tokens ?? 0) + (add.cache_tokens ?? 0),
        reasoning_tokens: (u.reasoning_tokens ?? 0) + (add.reasoning_tokens ?? 0),
        total_tokens: (u.total_tokens ?? 0) + (add.total_tokens ?? add.input_tokens + add.output_tokens),
        cost_usd: (u.cost_usd ?? 0) + (add.cost_usd ?? 0),
      }
      s.summary.cost_usd = s.summary.usage.cost_usd
      break
    }
    case 'agent_result':
      s.open = undefined
      s.summary.success = e.data.success
      s.summary.ended_at = e.ts
      break
    case 'error':
    case 'cancelled':
      s.open = undefined
      s.summary.success = false
      s.summary.ended_at = e.ts
      break
    case 'compaction': {
      // The summary replaces everything but the newest `messages_after - 1` messages.
      s.open = undefined
      const keep = Math.max(0, e.data.messages_after - 1)
      s.messages = [{ role: 'system', content: e.data.summary }, ...(keep ? s.messages.slice(-keep) : [])]
      break
    }
    case 'model_changed':
      s.model = e.data.new
      s.summary.model = e.data.new
      break
    case 'mode_changed':
      s.mode = e.data.new
      break
    case 'approval_changed':
      s.approval = e.data.new
      break
    default:
      break
  }
  return s
}
