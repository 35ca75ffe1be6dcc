/**
 * The JSON-lines wire as a mapping of the canonical event stream: one row per event type, each
 * a pure function of that one event (so a client resuming mid-stream gets the same messages as
 * one that saw everything). The table is typed over every event type: a new type does not
 * compile until this wire decides what it shows. Shapes are the spec's outbound messages
 * (specs/asyncapi/rpc.asyncapi.yaml).
 *
 * | event               | JSON-lines message                                                  |
 * |---------------------|---------------------------------------------------------------------|
 * | text_delta          | MessageEvent {role: assistant, content: <chunk>, done: false}       |
 * | reasoning           | ReasoningEvent {content} (extension)                                |
 * | agent_result        | MessageEvent {role: assistant, content: <final message>, done: true} |
 * | cancelled           | MessageEvent {role: assistant, content: <partial output>, done: true} |
 * | undo / redo         | MessageEvent {role: assistant, content: <reply line>, done: true}   |
 * | tool_start          | ToolExecutionEvent {status: started, tool_args}                     |
 * | tool_progress       | ToolExecutionEvent {status: progress, result: {stdout?, stderr?}}   |
 * | tool_result         | ToolExecutionEvent {status: completed | failed, result}             |
 * | permission_request  | PermissionRequestEvent (extension; `--approval ask`)                |
 * | compaction          | CompactionEvent (extension)                                         |
 * | notice              | NoticeEvent (extension)                                             |
 * | plan                | PlanEvent {entries} (extension; the complete plan)                  |
 * | error               | ErrorEvent {message}                                                |
 * | every other type    | nothing                                                             |
 */
import type { RpcOutboundMessage } from '../../generated/rpc/jsonl.gen.ts'
import type { AnyEvent, EventOf, EventType } from '../events/event-types.ts'

type Out = RpcOutboundMessage
type Row<T extends EventType> = (e: EventOf<T>) => Out[]
const none = (): Out[] => []
const final = (content: string): Out[] => [{ type: 'message', role: 'assistant', content, done: true }]

export const RPC_EVENT_MAP: { [T in EventType]: Row<T> } = {
  user_message: none,
  turn_start: none,
  step_start: none,
  text_delta: (e) => [{ type: 'message', role: 'assistant', content: e.data.text, done: false }],
  reasoning: (e) => (e.data.text ? [{ type: 'reasoning', content: e.data.text }] : []),
  tool_call: none,
  tool_start: (e) => [
    {
      type: 'tool_execution',
      call_id: e.data.call_id,
      tool_name: e.data.tool,
      tool_args: e.data.args,
      status: 'started',
    },
  ],
  tool_progress: (e) => {
    const result: { stdout?: string; stderr?: string } = {}
    if (e.data.stdout !== undefined) result.stdout = e.data.stdout
    if (e.data.stderr !== undefined) result.stderr = e.data.stderr
    return [{ type: 'tool_execution', call_id: e.data.call_id, tool_name: e.data.tool, status: 'progress', result }]
  },
  tool_result: (e) => [
    {
      type: 'tool_execution',
      call_id: e.data.call_id,
      tool_name: e.data.tool,
      status: e.data.ok ? 'completed' : 'failed',
      result: e.data.ok ? (e.data.output ?? '') : (e.data.error ?? 'failed'),
    },
  ],
  permission_request: (e) => [
    {
      type: 'permission_request',
      request_id: e.data.request_id,
      call_id: e.data.call_id,
      tool_name: e.data.tool,
      tool_args: e.data.args,
      options: e.data.options,
    },
  ],
  permission_reply: none,
  sandbox_violation: none,
  usage: none,
  step_end: none,
  turn_end: none,
  agent_result: (e) => final(e.data.output),
  error: (e) => [{ type: 'error', message: e.data.message }],
  cancelled: (e) => final(e.data.partial_output),
  compaction: (e) => [
    {
      type: 'compaction',
      summary: e.data.summary,
      messages_before: e.data.messages_before,
      messages_after: e.data.messages_after,
    },
  ],
  steering: none,
  model_changed: none,
  mode_changed: none,
  approval_changed: none,
  notice: (e) => [{ type: 'notice', level: e.data.level, text: e.data.text }],
  file_edit: none,
  file_open: none,
  undo: (e) => final(e.data.output),
  redo: (e) => final(e.data.output),
  plan: (e) => [{ type: 'plan', entries: e.data.entries }],
  session_renamed: none,
}

/** The JSON-lines messages of one event. */
export function toRpcMessages(e: AnyEvent): Out[] {
  return (RPC_EVENT_MAP[e.type] as Row<typeof e.type>)(e as never)
}
