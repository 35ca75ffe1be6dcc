/**
 * The ferret seed wire (docs/zed.md): flat, `kind`-tagged `session/update` params, one row per
 * canonical event type, each a pure function of one event, at most one notification per event.
 * `eventId` is given by the caller: the session's notification counter on this wire (1 for the
 * first notification, docs/decisions/0070-acp-agent-sessions.md).
 *
 * | event              | kind                                                       |
 * |--------------------|------------------------------------------------------------|
 * | text_delta         | agent_message_chunk {text}                                 |
 * | tool_call          | tool_call_start {id, tool, args}                           |
 * | tool_progress      | tool_call_progress {id, stdout / stderr}                   |
 * | tool_result        | tool_call_end {id, result, duration_ms}                    |
 * | permission_request | permission_request {id, tool, args, risk}                  |
 * | sandbox_violation  | sandbox_violation {tool, path, mode}                       |
 * | approval_changed   | approval_changed {old, new}                                |
 * | usage              | cost_update {input, output, cache, reasoning, total_usd}   |
 * | file_edit          | file_edit {path, diff (unified, from the `diff` library)}  |
 * | file_open          | file_open {path, line?}                                    |
 * | notice             | notice {level, text}                                       |
 * | turn_end           | turn_end {id: turn number, stop_reason}                    |
 * | every other type   | nothing                                                    |
 *
 * `cost_update.total_usd` is the step's priced cost, 0 when the model has no known price (the
 * field is required; the unpriced state shows as `null` on HTTP, never as a guessed number).
 */
import type { z } from 'zod'
import type { FerretSessionUpdateSchema } from '../../../generated/acp/seed.gen.ts'
import type { AnyEvent, EventOf, EventType } from '../../events/event-types.ts'

export type FerretUpdate = z.input<typeof FerretSessionUpdateSchema>
type Base = { sessionId: string; eventId: number }
type Row<T extends EventType> = (e: EventOf<T>, b: Base) => FerretUpdate | undefined
const none = (): undefined => undefined
const STOP: Record<string, 'end_turn' | 'max_steps' | 'cancelled' | 'error'> = {
  end_turn: 'end_turn',
  max_steps: 'max_steps',
  cancelled: 'cancelled',
  error: 'error',
  max_tokens: 'end_turn',
  refusal: 'end_turn',
}

export const FERRET_EVENT_MAP: { [T in EventType]: Row<T> } = {
  user_message: none,
  turn_start: none,
  step_start: none,
  text_delta: (e, b) => ({ ...b, kind: 'agent_message_chunk', text: e.data.text }),
  reasoning: none,
  tool_call: (e, b) => ({ ...b, kind: 'tool_call_start', id: e.data.call_id, tool: e.data.tool, args: e.data.args }),
  tool_start: none,
  tool_progress: (e, b) => ({
    ...b,
    kind: 'tool_call_progress',
    id: e.data.call_id,
    ...(e.data.stdout !== undefined ? { stdout: e.data.stdout } : {}),
    ...(e.data.stderr !== undefined ? { stderr: e.data.stderr } : {}),
  }),
  tool_result: (e, b) => ({
    ...b,
    kind: 'tool_call_end',
    id: e.data.call_id,
    result: e.data.ok ? { ok: true, output: e.data.output ?? '' } : { ok: false, error: e.data.error ?? 'failed' },
    duration_ms: e.data.duration_ms ?? 0,
  }),
  permission_request: (e, b) => ({
    ...b,
    kind: 'permission_request',
    id: e.data.request_id,
    tool: e.data.tool,
    args: e.data.args,
    risk: e.data.risk ?? 'medium',
  }),
  permission_reply: none,
  sandbox_violation: (e, b) => ({
    ...b,
    kind: 'sandbox_violation',
    tool: e.data.tool,
    path: e.data.path,
    mode: e.data.mode,
  }),
  usage: (e, b) => {
    const u = e.data.usage
    return {
      ...b,
      kind: 'cost_update',
      input: u.input_tokens,
      output: u.output_tokens,
      cache: u.cache_tokens ?? (u.cache_read_tokens ?? 0) + (u.cache_write_tokens ?? 0),
      reasoning: u.reasoning_tokens ?? 0,
      total_usd: u.cost_usd ?? 0,
    }
  },
  step_end: none,
  turn_end: (e, b) => ({ ...b, kind: 'turn_end', id: e.turn, stop_reason: STOP[e.data.stop_reason] ?? 'end_turn' }),
  agent_result: none,
  error: none,
  cancelled: none,
  compaction: none,
  steering: none,
  model_changed: none,
  mode_changed: none,
  approval_changed: (e, b) => ({ ...b, kind: 'approval_changed', old: e.data.old, new: e.data.new }),
  notice: (e, b) => ({ ...b, kind: 'notice', level: e.data.level, text: e.data.text }),
  file_edit: (e, b) => ({ ...b, kind: 'file_edit', path: e.data.path, diff: e.data.diff }),
  file_open: (e, b) => ({
    ...b,
    kind: 'file_open',
    path: e.data.path,
    ...(e.data.line !== undefined ? { line: e.data.line } : {}),
  }),
  undo: none,
  redo: none,
  // The seed has no plan kind: the `update_plan` tool_call_start already carries the entries.
  plan: none,
  // No title kind in docs/zed.md: a client reads titles from `session/list`.
  session_renamed: none,
}

/** The ferret `session/update` params of one event, or undefined when it shows nothing. */
export function toFerretParams(e: AnyEvent, eventId: number): FerretUpdate | undefined {
  return (FERRET_EVENT_MAP[e.type] as Row<typeof e.type>)(e as never, { sessionId: e.session_id, eventId })
}
