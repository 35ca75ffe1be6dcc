/**
 * A session's state is a fold over its events: the conversation history the model sees, the
 * current model and mode, and the summary kept on disk. The live session and a session loaded
 * from disk run the same reducer, so a reload rebuilds exactly what was there.
 */
import type { ChatMessage, SessionSummary, Usage } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from '../events/event-types.ts'

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
  /** Index in `messages` where each turn that can still be undone starts (oldest first). */
  turnStarts: number[]
  /** Turns rewound by `undo`, most recently rewound on top; a new user turn discards them. */
  redo: ChatMessage[][]
  /** A turn has started and not ended (after a crash: the turn to close before the next). */
  inTurn: boolean
  /**
   * The last event is a `turn_end`: its terminal event (`agent_result`, `error`, `cancelled`),
   * written right after it, is missing (a write refused, a crash between the two): owed.
   */
  terminalOwed: boolean
  /** Tool calls of the open turn without a result yet (call id → tool). */
  openCalls: Map<string, string>
}

const ZERO: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cache_tokens: 0,
  reasoning_tokens: 0,
  total_tokens: 0,
  cost_usd: 0,
}

/** `a + b`; a null (unknown) cost on either side makes the sum unknown. */
const addCost = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a === null || b === null ? null : (a ?? 0) + (b ?? 0)

/** Add usage `b` to usage `a` (both cumulative shapes). */
export function addUsage(a: Usage, b: Usage): Usage {
  const cacheRead = (a.cache_read_tokens ?? 0) + (b.cache_read_tokens ?? 0)
  const cacheWrite = (a.cache_write_tokens ?? 0) + (b.cache_write_tokens ?? 0)
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    cache_tokens: (a.cache_tokens ?? 0) + (b.cache_tokens ?? (b.cache_read_tokens ?? 0) + (b.cache_write_tokens ?? 0)),
    reasoning_tokens: (a.reasoning_tokens ?? 0) + (b.reasoning_tokens ?? 0),
    total_tokens:
      (a.total_tokens ?? a.input_tokens + a.output_tokens) + (b.total_tokens ?? b.input_tokens + b.output_tokens),
    cost_usd: addCost(a.cost_usd, b.cost_usd),
  }
}

export const zeroUsage = (): Usage => ({ ...ZERO })

export function initialState(init: {
  session_id: string
  model: string
  mode: string
  created_at: string
  working_dir: string
  approval?: string
}): SessionState {
  return {
    messages: [],
    model: init.model,
    mode: init.mode,
    ...(init.approval ? { approval: init.approval } : {}),
    turns: 0,
    lastSeq: 0,
    turnStarts: [],
    redo: [],
    inTurn: false,
    terminalOwed: false,
    openCalls: new Map(),
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
  s.terminalOwed = e.type === 'turn_end'
  switch (e.type) {
    case 'user_message':
      s.open = undefined
      s.turnStarts.push(s.messages.length)
      s.redo = []
      s.messages.push({ role: 'user', content: e.data.text })
      break
    case 'steering':
      s.open = undefined
      s.messages.push({ role: 'user', content: e.data.text })
      break
    case 'turn_start':
      s.inTurn = true
      s.openCalls.clear()
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
    case 'reasoning': {
      const m = assistant(s)
      const blocks = (m.reasoning ??= [])
      const lastBlock = blocks.at(-1)
      if (!lastBlock || lastBlock.signature !== undefined) blocks.push({ text: e.data.text })
      else lastBlock.text += e.data.text
      if (e.data.signature !== undefined) blocks.at(-1)!.signature = e.data.signature
      break
    }
    case 'tool_call': {
      s.openCalls.set(e.data.call_id, e.data.tool)
      const m = assistant(s)
      m.tool_calls = [...(m.tool_calls ?? []), { call_id: e.data.call_id, tool: e.data.tool, args: e.data.args }]
      s.summary.tool_calls = (s.summary.tool_calls ?? 0) + 1
      break
    }
    case 'tool_result': {
      const d = e.data
      s.openCalls.delete(d.call_id)
      s.messages.push({
        role: 'tool',
        content: d.ok ? (d.output ?? '') : (d.error ?? 'failed'),
        tool_result: {
          call_id: d.call_id,
          tool: d.tool,
          ok: d.ok,
          ...(d.output !== undefined ? { output: d.output } : {}),
          ...(d.error !== undefined ? { error: d.error } : {}),
        },
      })
      break
    }
    case 'step_end':
      s.open = undefined
      break
    case 'usage': {
      s.summary.usage = addUsage(s.summary.usage ?? zeroUsage(), e.data.usage)
      // The summary's flat cost stays a number (a run with an unpriced model costs "at least" this).
      s.summary.cost_usd = s.summary.usage.cost_usd ?? s.summary.cost_usd ?? 0
      break
    }
    case 'turn_end':
      s.inTurn = false
      break
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
      const kept = keep ? s.messages.slice(-keep) : []
      const firstKept = s.messages.length - kept.length
      s.messages = [{ role: 'system', content: e.data.summary }, ...kept]
      // Turns summarised away can no longer be undone; the kept ones shift behind the summary.
      s.turnStarts = s.turnStarts.filter((i) => i >= firstKept).map((i) => i - firstKept + 1)
      s.redo = []
      break
    }
    case 'undo': {
      s.open = undefined
      const n = Math.min(e.data.turns, s.turnStarts.length)
      for (let k = 0; k < n; k++) {
        const start = s.turnStarts.pop()!
        s.redo.push(s.messages.splice(start))
      }
      break
    }
    case 'redo': {
      s.open = undefined
      const n = Math.min(e.data.turns, s.redo.length)
      for (let k = 0; k < n; k++) {
        s.turnStarts.push(s.messages.length)
        s.messages.push(...s.redo.pop()!)
      }
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
    case 'session_renamed':
      if (e.data.title === null) delete s.summary.title
      else s.summary.title = e.data.title
      break
    default:
      break
  }
  return s
}
