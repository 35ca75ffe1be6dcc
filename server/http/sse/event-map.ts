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
import { encodeRecord, type SseRecord } from './format.ts'

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

/** The closing record of either stream. */
export function endRecord(end: SseEnd): SseRecord {
  return { event: 'end', data: JSON.stringify(end) }
}

/**
 * A wire's records as UTF-8 bytes, made once per event: every client of a stream gets the same
 * event object from the store (its live fan-out and its ring of recent events), so 500 clients of
 * one session cost one `JSON.stringify` and one encoding per event, not 500. Keyed weakly by the
 * event object; an event read back from storage is a new object and is encoded once more.
 */
export type RecordBytes = (e: AnyEvent) => Uint8Array

const utf8 = new TextEncoder()

function encodedOnce(record: (e: AnyEvent) => SseRecord): RecordBytes {
  const made = new WeakMap<AnyEvent, Uint8Array>()
  return (e) => {
    let bytes = made.get(e)
    if (bytes === undefined) made.set(e, (bytes = utf8.encode(encodeRecord(record(e)))))
    return bytes
  }
}

/** `/sessions/{id}/events` records as bytes (see encodedOnce). */
export const pluralBytes: RecordBytes = encodedOnce(pluralRecord)
/** `/session/{id}/events` records as bytes (see encodedOnce). */
export const singularBytes: RecordBytes = encodedOnce(singularRecord)
