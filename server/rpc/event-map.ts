/**
 * The JSON-lines wire as a mapping of the canonical event stream (one row per event type that
 * appears on this wire; every other type is not shown here). Shapes are the spec's outbound
 * messages (specs/asyncapi/rpc.asyncapi.yaml).
 *
 * | event               | JSON-lines message                                                  |
 * |---------------------|---------------------------------------------------------------------|
 * | text_delta          | MessageEvent {role: assistant, content: <chunk>, done: false}       |
 * | agent_result        | MessageEvent {role: assistant, content: <final message>, done: true} |
 * | cancelled           | MessageEvent {role: assistant, content: <partial output>, done: true} |
 * | tool_call           | ToolExecutionEvent {status: started}                                |
 * | tool_progress       | ToolExecutionEvent {status: progress, result: {stdout?, stderr?}}   |
 * | tool_result         | ToolExecutionEvent {status: completed | failed, result}             |
 * | permission_request  | PermissionRequestEvent (extension; `--approval ask`)                |
 * | compaction          | CompactionEvent (extension)                                         |
 * | error               | ErrorEvent {message}                                                |
 */
import type { RpcOutboundMessage } from '../../generated/rpc/jsonl.gen.ts'
import type { AnyEvent } from '../core/events.ts'

type Out = RpcOutboundMessage

export function toRpcMessages(e: AnyEvent, calls: Map<string, { tool: string; args: Record<string, unknown> }>): Out[] {
  switch (e.type) {
    case 'text_delta':
      return [{ type: 'message', role: 'assistant', content: e.data.text, done: false }]
    case 'agent_result':
      return [{ type: 'message', role: 'assistant', content: e.data.output, done: true }]
    case 'cancelled':
      return [{ type: 'message', role: 'assistant', content: e.data.partial_output, done: true }]
    case 'tool_call':
      calls.set(e.data.call_id, { tool: e.data.tool, args: e.data.args })
      return [{ type: 'tool_execution', call_id: e.data.call_id, tool_name: e.data.tool, tool_args: e.data.args, status: 'started' }]
    case 'tool_progress': {
      const c = calls.get(e.data.call_id)
      const result: { stdout?: string; stderr?: string } = {}
      if (e.data.stdout !== undefined) result.stdout = e.data.stdout
      if (e.data.stderr !== undefined) result.stderr = e.data.stderr
      return [{ type: 'tool_execution', call_id: e.data.call_id, tool_name: c?.tool ?? '', tool_args: c?.args ?? {}, status: 'progress', result }]
    }
    case 'tool_result': {
      const c = calls.get(e.data.call_id)
      calls.delete(e.data.call_id)
      return [
        {
          type: 'tool_execution',
          call_id: e.data.call_id,
          tool_name: e.data.tool,
          tool_args: c?.args ?? {},
          status: e.data.ok ? 'completed' : 'failed',
          result: e.data.ok ? (e.data.output ?? '') : (e.data.error ?? 'failed'),
        },
      ]
    }
    case 'permission_request':
      return [{ type: 'permission_request', request_id: e.data.request_id, call_id: e.data.call_id, tool_name: e.data.tool, tool_args: e.data.args, options: e.data.options }]
    case 'compaction':
      return [{ type: 'compaction', summary: e.data.summary, messages_before: e.data.messages_before, messages_after: e.data.messages_after }]
    case 'error':
      return [{ type: 'error', message: e.data.message }]
    default:
      return []
  }
}
