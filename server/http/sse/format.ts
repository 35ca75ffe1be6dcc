/**
 * Server-Sent Events framing (WHATWG HTML §9.2): one record is `id:`, `event:`, `retry:` and
 * `data:` lines and a blank line. A payload is split into one `data:` line per line (CR, LF and
 * CRLF all end a line for the client), so no payload can forge a field; field values other than
 * data never hold a line end or NUL. Comment lines start with `:`.
 */
export interface SseRecord {
  id?: string
  event?: string
  data: string
  retry?: number
  /** `data` is JSON text, which never holds a raw CR or LF: one data line, no scan. */
  json?: boolean
}

const LINE_END = /\r\n|\r|\n/
const BAD_FIELD = /[\r\n\0]/
const HAS_LINE_END = /[\r\n]/

function field(name: string, value: string): string {
  if (BAD_FIELD.test(value)) throw new Error(`SSE ${name} must not contain CR, LF or NUL`)
  return `${name}: ${value}\n`
}

export function encodeRecord(r: SseRecord): string {
  let out = ''
  if (r.id !== undefined) out += field('id', r.id)
  if (r.event !== undefined) out += field('event', r.event)
  if (r.retry !== undefined) out += `retry: ${Math.max(0, Math.floor(r.retry))}\n`
  // JSON payloads never hold a raw line end: one data line, no split.
  if (r.json || !HAS_LINE_END.test(r.data)) return `${out}data: ${r.data}\n\n`
  for (const line of r.data.split(LINE_END)) out += `data: ${line}\n`
  return `${out}\n`
}

/** A comment record (heartbeats, the opening line); never carries data or an id. */
export function encodeComment(text: string): string {
  return `${text
    .split(LINE_END)
    .map((l) => `: ${l}`)
    .join('\n')}\n\n`
}
