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
import { storedPart, type StoredText } from '../../store/stored-lines.ts'
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

/**
 * Writes the encoded record of a stored record kept as its JSON parts (stored-lines.ts) into
 * `out` at `at`: the offset after it, or minus the bytes it needs when `out` has less room left.
 */
export type StoredEncoder = (r: StoredText, out: Buffer, at: number) => number

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1')
const ID_FIELD = ascii('id: ')
const TS_KEY = ascii(',"ts":')
const RECORD_END = ascii('}\n\n')
/** Per event type, the bytes between the counter and the event id, and between the id and `data`. */
const PLURAL_HEAD = new Map<EventType, Buffer>()
const PLURAL_MID = new Map<EventType, Buffer>()
for (const type of Object.keys(SINGULAR_EVENT_NAMES) as EventType[]) {
  PLURAL_HEAD.set(type, ascii(`\nevent: ${type}\ndata: {"id":`))
  PLURAL_MID.set(type, ascii(`,"type":"${type}","metadata":`))
}
const PLURAL_FIXED = ID_FIELD.length + TS_KEY.length + RECORD_END.length

/** Copy `src[from..to)` into `out` at `at` (short runs byte by byte: cheaper than a call into C++). */
function put(out: Buffer, at: number, src: Buffer, from = 0, to = src.length): number {
  const n = to - from
  if (n > 64) src.copy(out, at, from, to)
  else for (let i = 0; i < n; i++) out[at + i] = src[from + i]!
  return at + n
}

const digitCount = (n: number): number => (n < 10 ? 1 : Math.floor(Math.log10(n)) + 1)

/** Write the decimal digits of the non-negative integer `n` (`d` of them) into `out` at `at`. */
function putDigits(out: Buffer, at: number, n: number, d: number): number {
  for (let i = at + d - 1; i >= at; i--) {
    out[i] = 0x30 + (n % 10)
    n = Math.floor(n / 10)
  }
  return at + d
}

/**
 * The encoded record of `/sessions/{id}/events` for a stored record, spliced from its stored
 * bytes without making a string: the same bytes as `encodeRecord(pluralRecord(e))`
 * (stored-records.test.ts holds them equal).
 */
export const pluralStored: StoredEncoder = (r, out, at) => {
  const head = PLURAL_HEAD.get(r.type)!
  const mid = PLURAL_MID.get(r.type)!
  const d = digitCount(r.seq)
  const need =
    PLURAL_FIXED + d + head.length + mid.length + (r.idEnd - r.idAt) + (r.dataEnd - r.dataAt) + (r.tsEnd - r.tsAt)
  if (out.length - at < need) return -need
  let p = put(out, at, ID_FIELD)
  p = putDigits(out, p, r.seq, d)
  p = put(out, p, head)
  p = put(out, p, r.page, r.idAt, r.idEnd)
  p = put(out, p, mid)
  p = put(out, p, r.page, r.dataAt, r.dataEnd)
  p = put(out, p, TS_KEY)
  p = put(out, p, r.page, r.tsAt, r.tsEnd)
  return put(out, p, RECORD_END)
}

/** The encoded record of `/session/{id}/events` for a stored record, as `pluralStored` (through a string). */
export const singularStored: StoredEncoder = (r, out, at) => {
  const timestamp = JSON.stringify(Date.parse(storedPart(r, 'ts').slice(1, -1)))
  const text = `id: ${r.seq}\nevent: ${SINGULAR_EVENT_NAMES[r.type]}\ndata: {"message_id":${storedPart(r, 'id')},"type":"${r.type}","data":${storedPart(r, 'data')},"turn":${r.turn},"timestamp":${timestamp}}\n\n`
  const need = Buffer.byteLength(text)
  if (out.length - at < need) return -need
  return at + out.write(text, at)
}

/** The closing record of either stream. */
export function endRecord(end: SseEnd): SseRecord {
  return { event: 'end', data: JSON.stringify(end) }
}
