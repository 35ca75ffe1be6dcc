/**
 * Stored event records read as text, not as objects (docs/decisions/0340-replay-stored-bytes.md):
 * a replay sends what the segment holds instead of parsing, re-validating and re-serialising
 * every event. A record the event writer wrote is `JSON.stringify` of the envelope in its
 * schema's order, `{"seq":…,"id":…,"session_id":…,"type":…,"turn":…,"ts":…,"data":{…}}`;
 * the envelope is strict, so after those six keys `data` is the last one and its JSON text is
 * the rest of the line but the closing brace. Such a line is cut into its parts by one sticky
 * regular expression; any other line (another writer's spacing or key order, escapes in an id)
 * is parsed as before. The full schema check is not repeated here: every line was validated
 * when it was appended (or checked against its event file when the session was opened).
 */
import type { AnyEvent, EventType } from '../events/event-types.ts'
import { EVENT_TYPES } from '../events/event-types.ts'

/** One stored record: its parts as JSON text, or (not in the writer's form) the parsed event. */
export type StoredRecord =
  | {
      kind: 'text'
      seq: number
      type: EventType
      turn: number
      /** JSON text of `id`, `ts` and `data`, as stored. */
      id: string
      ts: string
      data: string
    }
  | { kind: 'event'; seq: number; type: EventType; event: AnyEvent }

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES)
const HEAD =
  /\{"seq":(\d+),"id":("[^"\\]*"),"session_id":"([^"\\]*)","type":"([a-z_]+)","turn":(\d+),"ts":("[^"\\]*"),"data":\{/y

/**
 * The records of `text` (`count` lines, each ending in a newline, the first of counter `first`),
 * or undefined when they are not those lines of `sessionId` (a line missing, out of sequence,
 * not JSON, another session's or of an unknown type): the caller then reads them the slow way.
 */
export function storedRecords(
  text: string,
  first: number,
  count: number,
  sessionId: string,
): StoredRecord[] | undefined {
  // JSON.stringify never writes a raw CR; one in a stored line (edited on disk) would end an SSE
  // line early on the wire: such a page goes the parsed way.
  if (text.includes('\r')) return undefined
  const out: StoredRecord[] = []
  let at = 0
  for (let k = 0; k < count; k++) {
    const nl = text.indexOf('\n', at)
    if (nl < 0) return undefined
    const seq = first + k
    const r = recordAt(text, at, nl, seq, sessionId)
    if (!r) return undefined
    out.push(r)
    at = nl + 1
  }
  return at === text.length ? out : undefined
}

function recordAt(text: string, start: number, nl: number, seq: number, sessionId: string): StoredRecord | undefined {
  HEAD.lastIndex = start
  const m = HEAD.exec(text)
  if (
    m &&
    HEAD.lastIndex < nl &&
    Number(m[1]) === seq &&
    m[3] === sessionId &&
    KNOWN_TYPES.has(m[4]!) &&
    text.charCodeAt(nl - 1) === 0x7d &&
    text.charCodeAt(nl - 2) === 0x7d
  ) {
    return {
      kind: 'text',
      seq,
      type: m[4] as EventType,
      turn: Number(m[5]),
      id: m[2]!,
      ts: m[6]!,
      data: text.slice(HEAD.lastIndex - 1, nl - 1),
    }
  }
  let value: unknown
  try {
    value = JSON.parse(text.slice(start, nl))
  } catch {
    return undefined
  }
  const e = value as Partial<AnyEvent> | null
  if (
    typeof e !== 'object' ||
    e === null ||
    e.seq !== seq ||
    e.session_id !== sessionId ||
    !KNOWN_TYPES.has(e.type as string) ||
    typeof e.data !== 'object' ||
    e.data === null
  )
    return undefined
  return { kind: 'event', seq, type: e.type!, event: e as AnyEvent }
}

/** The event of a stored record (parsed when it was kept as text). */
export function storedEvent(r: StoredRecord, sessionId: string): AnyEvent {
  if (r.kind === 'event') return r.event
  return {
    seq: r.seq,
    id: JSON.parse(r.id) as string,
    session_id: sessionId,
    type: r.type,
    turn: r.turn,
    ts: JSON.parse(r.ts) as string,
    data: JSON.parse(r.data) as never,
  } as AnyEvent
}
