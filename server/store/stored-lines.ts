/**
 * Stored event records read as bytes, not as objects (docs/decisions/0340-replay-stored-bytes.md,
 * 0415-replay-spliced-bytes.md): a replay sends what the segment holds instead of parsing,
 * re-validating and re-serialising every event. A record the event writer wrote is
 * `JSON.stringify` of the envelope in its schema's order,
 * `{"seq":…,"id":…,"session_id":…,"type":…,"turn":…,"ts":…,"data":{…}}`; the envelope is strict,
 * so after those six keys `data` is the last one and its JSON text is the rest of the line but the
 * closing brace. Such a line is cut into its parts by a scan of its bytes (no string is made of
 * it: a replay copies the parts from the page into the records it sends); any other line
 * (another writer's spacing or key order, escapes in an id) is parsed as before. The full schema
 * check is not repeated here: every line was validated when it was appended (or checked against
 * its event file when the session was opened).
 */
import type { AnyEvent, EventType } from '../events/event-types.ts'
import { EVENT_TYPES } from '../events/event-types.ts'

/** One stored record: its parts as byte ranges of the page, or (not in the writer's form) the parsed event. */
export type StoredRecord =
  | {
      kind: 'text'
      seq: number
      type: EventType
      turn: number
      /** The page the record's line is in. */
      page: Buffer
      /** JSON text of `id`, `ts` and `data` as stored: `page[idAt..idEnd)` and so on. */
      idAt: number
      idEnd: number
      tsAt: number
      tsEnd: number
      dataAt: number
      dataEnd: number
    }
  | { kind: 'event'; seq: number; type: EventType; event: AnyEvent }

export type StoredText = Extract<StoredRecord, { kind: 'text' }>

/** The JSON text of one part of a stored record. */
export function storedPart(r: StoredText, part: 'id' | 'ts' | 'data'): string {
  if (part === 'id') return r.page.toString('utf8', r.idAt, r.idEnd)
  if (part === 'ts') return r.page.toString('utf8', r.tsAt, r.tsEnd)
  return r.page.toString('utf8', r.dataAt, r.dataEnd)
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const NL = 0x0a
const CR = 0x0d
const CLOSE = 0x7d

/** Known event types by a hash of their name's bytes (a lookup without making a string). */
const TYPES_BY_HASH = new Map<number, EventType[]>()
const hashOf = (s: string): number => {
  let h = s.length
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0
  return h
}
for (const t of EVENT_TYPES) {
  const h = hashOf(t)
  TYPES_BY_HASH.set(h, [...(TYPES_BY_HASH.get(h) ?? []), t])
}
const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES)

/** The known type whose name is `b[from..to)`, or undefined. */
function typeAt(b: Buffer, from: number, to: number): EventType | undefined {
  let h = to - from
  for (let i = from; i < to; i++) h = (Math.imul(h, 31) + b[i]!) | 0
  const candidates = TYPES_BY_HASH.get(h)
  if (!candidates) return undefined
  for (const t of candidates) {
    if (t.length !== to - from) continue
    let same = true
    for (let i = 0; i < t.length && same; i++) same = t.charCodeAt(i) === b[from + i]
    if (same) return t
  }
  return undefined
}

/** Whether `b` holds the ASCII bytes of `lit` at `at`. */
function holds(b: Buffer, at: number, lit: Uint8Array): boolean {
  if (at + lit.length > b.length) return false
  for (let i = 0; i < lit.length; i++) if (b[at + i] !== lit[i]) return false
  return true
}

/** The bytes of a session field's key and of the `type` key after it: checked in full. */
const SESSION_KEY = ',"session_id":"'.length
const TYPE_KEY = '","type":"'.length

/**
 * Whether `b` holds the session field `session` (`,"session_id":"…","type":"`) at `at`: its keys
 * and its length (see `storedRecords`).
 */
function sessionField(b: Buffer, at: number, session: Uint8Array): boolean {
  const n = session.length
  if (at + n > b.length) return false
  for (let i = 0; i < SESSION_KEY; i++) if (b[at + i] !== session[i]) return false
  for (let i = n - TYPE_KEY; i < n; i++) if (b[at + i] !== session[i]) return false
  return true
}

const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1')
const SEQ = ascii('{"seq":')
const ID = ascii(',"id":')
const TURN = ascii('","turn":')
const TS = ascii(',"ts":')
const DATA = ascii(',"data":{')

/**
 * The records of `page` (`count` lines, each ending in a newline, the first of counter `first`),
 * or undefined when they are not those lines of `sessionId` (a line missing, out of sequence,
 * not JSON, of an unknown type, not the session's): the caller then reads them the slow way.
 *
 * The page is a verified (or checksum-vouched) part of the session's segment, whose lines were
 * checked when they were appended (docs/decisions/0471-stored-scan-vouched.md). So the scan finds
 * the parts the wire needs and checks the line's shape, and touches no more of the bytes it does
 * not send than that: a line's end comes from the segment's line ends (`lines`: `ends[seq - 1]` is
 * the file offset after line `seq`, `base` the file offset of `page[0]`) when the caller has them,
 * and the session id is compared byte by byte on the page's first line only (a segment copied
 * from another session's directory fails there); on the others its field is checked by its length
 * and the keys around it (the id is not on the wire; the parsed way still compares it).
 */
export function storedRecords(
  page: Buffer,
  first: number,
  count: number,
  sessionId: string,
  lines?: { ends: readonly number[]; base: number },
): StoredRecord[] | undefined {
  // JSON.stringify never writes a raw CR; one in a stored line (edited on disk) would end an SSE
  // line early on the wire: such a page goes the parsed way.
  if (page.indexOf(CR) >= 0) return undefined
  const session = Buffer.from(`,"session_id":${JSON.stringify(sessionId)},"type":"`)
  const out: StoredRecord[] = []
  let at = 0
  const ends = lines?.ends
  const base = (lines?.base ?? 0) + 1
  for (let k = 0; k < count; k++) {
    const nl = ends ? (ends[first + k - 1] ?? 0) - base : page.indexOf(NL, at)
    if (nl < at || page[nl] !== NL) return undefined
    const seq = first + k
    const r = recordAt(page, at, nl, seq, sessionId, session, k === 0)
    if (!r) return undefined
    out.push(r)
    at = nl + 1
  }
  return at === page.length ? out : undefined
}

/** The end of a JSON string without escapes that starts at `at` (its closing quote + 1), or -1. */
function plainString(b: Buffer, at: number, nl: number): number {
  if (b[at] !== QUOTE) return -1
  for (let i = at + 1; i < nl; i++) {
    const c = b[i]
    if (c === QUOTE) return i + 1
    if (c === BACKSLASH) return -1
  }
  return -1
}

/** The end of the decimal digits at `at` (none, or a leading zero: -1). */
function digits(b: Buffer, at: number, nl: number): number {
  let i = at
  while (i < nl && b[i]! >= 0x30 && b[i]! <= 0x39) i++
  return i === at || (b[at] === 0x30 && i > at + 1) ? -1 : i
}

const numberAt = (b: Buffer, from: number, to: number): number => {
  let n = 0
  for (let i = from; i < to; i++) n = n * 10 + (b[i]! - 0x30)
  return n
}

/** The record of the writer-form line `b[start..nl)`, cut at its parts; undefined when it is not one. */
function writerRecord(
  b: Buffer,
  start: number,
  nl: number,
  seq: number,
  session: Uint8Array,
  wholeId: boolean,
): StoredText | undefined {
  if (!holds(b, start, SEQ)) return undefined
  const seqEnd = digits(b, start + SEQ.length, nl)
  if (seqEnd < 0 || numberAt(b, start + SEQ.length, seqEnd) !== seq || !holds(b, seqEnd, ID)) return undefined
  const idAt = seqEnd + ID.length
  const idEnd = plainString(b, idAt, nl)
  if (idEnd < 0 || !(wholeId ? holds(b, idEnd, session) : sessionField(b, idEnd, session))) return undefined
  const typeAt0 = idEnd + session.length
  let typeEnd = typeAt0
  while (typeEnd < nl && ((b[typeEnd]! >= 0x61 && b[typeEnd]! <= 0x7a) || b[typeEnd] === 0x5f)) typeEnd++
  const type = typeEnd > typeAt0 ? typeAt(b, typeAt0, typeEnd) : undefined
  if (!type || !holds(b, typeEnd, TURN)) return undefined
  const turnAt = typeEnd + TURN.length
  const turnEnd = digits(b, turnAt, nl)
  if (turnEnd < 0 || !holds(b, turnEnd, TS)) return undefined
  const tsAt = turnEnd + TS.length
  const tsEnd = plainString(b, tsAt, nl)
  if (tsEnd < 0 || !holds(b, tsEnd, DATA)) return undefined
  const dataAt = tsEnd + DATA.length - 1
  if (dataAt + 1 >= nl || b[nl - 1] !== CLOSE || b[nl - 2] !== CLOSE) return undefined
  return {
    kind: 'text',
    seq,
    type,
    turn: numberAt(b, turnAt, turnEnd),
    page: b,
    idAt,
    idEnd,
    tsAt,
    tsEnd,
    dataAt,
    dataEnd: nl - 1,
  }
}

function recordAt(
  b: Buffer,
  start: number,
  nl: number,
  seq: number,
  sessionId: string,
  session: Uint8Array,
  wholeId: boolean,
): StoredRecord | undefined {
  const r = writerRecord(b, start, nl, seq, session, wholeId)
  if (r) return r
  let value: unknown
  try {
    value = JSON.parse(b.toString('utf8', start, nl))
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
    id: JSON.parse(storedPart(r, 'id')) as string,
    session_id: sessionId,
    type: r.type,
    turn: r.turn,
    ts: JSON.parse(storedPart(r, 'ts')) as string,
    data: JSON.parse(storedPart(r, 'data')) as never,
  } as AnyEvent
}
