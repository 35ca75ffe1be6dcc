/**
 * The two SSE wires as mappings of the canonical event stream (specs/asyncapi/sse.asyncapi.yaml),
 * one row per event type, each a pure function of one event — a client resuming mid-stream gets
 * the same records as one that saw everything. Both tables are typed over every event type: a
 * new type does not compile until each wire decides how it shows it.
 *
 * | wire                   | `id:` | `event:`                                       | `data:`                                               |
 * |------------------------|-------|------------------------------------------------|-------------------------------------------------------|
 * | `/sessions/{id}/events`| seq   | the canonical type                             | SseEnvelope `{id, type, metadata: data, ts}`          |
 * | `/session/{id}/events` | seq   | `user_message`, `result` (agent_result), else `loop_event` | LoopEventEnvelope `{message_id, type, data, turn, timestamp}` |
 *
 * Both streams close with `event: end` (no `id:`), see sse-stream.ts.
 */
import type { LoopEventEnvelope, SseEnd, SseEnvelope } from '../../../generated/schemas.gen.ts'
import type { AnyEvent, EventType } from '../../events/event-types.ts'
import type { StoredRecord } from '../../store/stored-lines.ts'
import type { SseRecord } from './format.ts'

type SingularName = 'loop_event' | 'user_message' | 'result'

/** `event:` of each canonical type on the singular-family stream. */
export const SINGULAR_EVENT_NAMES: { readonly [T in EventType]: SingularName } = {
  user_message: 'user_message',
  turn_start: 'loop_event',
  step_start: 'loop_event',
  text_delta: 'loop_event',
  reasoning: 'loop_event',
  tool_call: 'loop_event',
  tool_start: 'loop_event',
  tool_progress: 'loop_event',
  tool_result: 'loop_event',
  permission_request: 'loop_event',
  permission_reply: 'loop_event',
  sandbox_violation: 'loop_event',
  usage: 'loop_event',
  step_end: 'loop_event',
  turn_end: 'loop_event',
  agent_result: 'result',
  error: 'loop_event',
  cancelled: 'loop_event',
  compaction: 'loop_event',
  steering: 'loop_event',
  model_changed: 'loop_event',
  mode_changed: 'loop_event',
  approval_changed: 'loop_event',
  notice: 'loop_event',
  file_edit: 'loop_event',
  file_open: 'loop_event',
  undo: 'loop_event',
  redo: 'loop_event',
  plan: 'loop_event',
  session_renamed: 'loop_event',
}

/** A record of `/sessions/{id}/events`. */
export function pluralRecord(e: AnyEvent): SseRecord {
  const data = { id: e.id, type: e.type, metadata: e.data, ts: e.ts } as SseEnvelope
  return { id: String(e.seq), event: e.type, data: JSON.stringify(data), json: true }
}

/** A record of `/session/{id}/events`. */
export function singularRecord(e: AnyEvent): SseRecord {
  const data = {
    message_id: e.id,
    type: e.type,
    data: e.data,
    turn: e.turn,
    timestamp: Date.parse(e.ts),
  } as LoopEventEnvelope
  return { id: String(e.seq), event: SINGULAR_EVENT_NAMES[e.type], data: JSON.stringify(data), json: true }
}

/** A stored record kept as its JSON parts (stored-lines.ts). */
type StoredText = Extract<StoredRecord, { kind: 'text' }>

/**
 * The encoded record of `/sessions/{id}/events` for a stored record, spliced from its stored
 * parts: the same bytes as `encodeRecord(pluralRecord(e))` (event-map.test.ts holds them equal).
 */
export function pluralStored(r: StoredText): string {
  return `id: ${r.seq}\nevent: ${r.type}\ndata: {"id":${r.id},"type":"${r.type}","metadata":${r.data},"ts":${r.ts}}\n\n`
}

/** The encoded record of `/session/{id}/events` for a stored record, as `pluralStored`. */
export function singularStored(r: StoredText): string {
  const timestamp = JSON.stringify(Date.parse(r.ts.slice(1, -1)))
  return `id: ${r.seq}\nevent: ${SINGULAR_EVENT_NAMES[r.type]}\ndata: {"message_id":${r.id},"type":"${r.type}","data":${r.data},"turn":${r.turn},"timestamp":${timestamp}}\n\n`
}

/** The closing record of either stream. */
export function endRecord(end: SseEnd): SseRecord {
  return { event: 'end', data: JSON.stringify(end) }
}
