/**
 * The otter seed wire (docs/zed.md, with 001's notification names) as a mapping of the canonical
 * event stream: one row per event type, each a pure function of one event, at most one
 * `session/update` per event. `eventId` is given by the caller: the session's notification
 * counter on this wire (1 for the first notification, docs/decisions/0070-acp-agent-sessions.md).
 *
 * | event              | update.sessionUpdate                                   |
 * |--------------------|--------------------------------------------------------|
 * | text_delta         | agent_message_chunk {content: {type: text, text}}      |
 * | tool_call          | tool_call {tool, input, callId}                        |
 * | tool_result        | tool_result {callId, success, output / error}          |
 * | usage              | usage_update {usage}                                   |
 * | permission_request | permission_request {requestId, tool, input, options}   |
 * | step_start         | stepStart {event: SSE envelope} (docs/http.md)            |
 * | step_end           | stepEnd {event}                                        |
 * | turn_end           | turnEnd {event}                                        |
 * | error              | error {event}                                          |
 * | notice             | agent_message_chunk `[level] text` (otter has no notice |
 * |                    | kind; an unconfined Bash warning must still be seen)   |
 * | plan               | nothing: no plan kind in docs/zed.md; the update_plan    |
 * |                    | tool_call's `input` carries the complete entry list    |
 * | every other type   | nothing                                                |
 */
import type { z } from 'zod'
import type { OtterUpdateSchema } from '../../../generated/acp/seed.gen.ts'
import type { AnyEvent, EventOf, EventType } from '../../events/event-types.ts'

export type OtterUpdate = z.input<typeof OtterUpdateSchema>
type Row<T extends EventType> = (e: EventOf<T>) => OtterUpdate | undefined
const none = (): undefined => undefined
const envelope = (e: AnyEvent) => ({ id: e.id, type: e.type, metadata: e.data, ts: e.ts }) as never

export const OTTER_EVENT_MAP: { [T in EventType]: Row<T> } = {
  user_message: none,
  turn_start: none,
  step_start: (e) => ({ sessionUpdate: 'stepStart', event: envelope(e) }),
  text_delta: (e) => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: e.data.text } }),
  reasoning: none,
  tool_call: (e) => ({ sessionUpdate: 'tool_call', tool: e.data.tool, input: e.data.args, callId: e.data.call_id }),
  tool_start: none,
  tool_progress: none,
  tool_result: (e) =>
    e.data.ok
      ? { sessionUpdate: 'tool_result', callId: e.data.call_id, success: true, output: e.data.output ?? '' }
      : { sessionUpdate: 'tool_result', callId: e.data.call_id, success: false, error: e.data.error ?? 'failed' },
  permission_request: (e) => ({
    sessionUpdate: 'permission_request',
    requestId: e.data.request_id,
    tool: e.data.tool,
    input: e.data.args,
    options: e.data.options,
  }),
  permission_reply: none,
  sandbox_violation: none,
  usage: (e) => ({ sessionUpdate: 'usage_update', usage: e.data.usage }),
  step_end: (e) => ({ sessionUpdate: 'stepEnd', event: envelope(e) }),
  turn_end: (e) => ({ sessionUpdate: 'turnEnd', event: envelope(e) }),
  agent_result: none,
  error: (e) => ({ sessionUpdate: 'error', event: envelope(e) }),
  cancelled: none,
  compaction: none,
  steering: none,
  model_changed: none,
  mode_changed: none,
  approval_changed: none,
  notice: (e) => ({
    sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: `\n[${e.data.level}] ${e.data.text}\n` },
  }),
  file_edit: none,
  file_open: none,
  undo: none,
  redo: none,
  // The seed has no plan kind: the `update_plan` tool_call above already carries the entries.
  plan: none,
  // No title kind in docs/zed.md: a client reads titles from `session/list`.
  session_renamed: none,
}

/** The otter `session/update` params of one event, or undefined when it shows nothing. */
export function toOtterParams(
  e: AnyEvent,
  eventId: number,
): { sessionId: string; eventId: number; update: OtterUpdate } | undefined {
  const update = (OTTER_EVENT_MAP[e.type] as Row<typeof e.type>)(e as never)
  return update ? { sessionId: e.session_id, eventId, update } : undefined
}
