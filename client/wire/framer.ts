/**
 * The line framer every stdio transport reads through: the server's ACP and JSON-lines RPC, the
 * client's Node ACP and RPC clients, and the conformance kit (which judges a foreign agent's raw
 * stdout with it). Bytes in, frames out; no Node API, so it also runs in a browser.
 *
 * Why hand-written: the libraries that split streams into lines (readline, split2, ndjson)
 * either split on a raw CR inside a message (readline), decode per chunk, or on an over-long
 * line silently drop it or kill the stream; both transports must instead answer an over-long
 * line with an error and keep reading. See docs/decisions/0005-stdio-framing.md.
 *
 * Rules: a frame ends at LF; one CR before the LF is stripped (CRLF); a CR elsewhere is part
 * of the message (legal JSON whitespace). Bytes are decoded as UTF-8 per complete line, so a
 * character split across reads is whole; invalid UTF-8 is reported, not replaced. A UTF-8 BOM
 * at the start of the stream is dropped. Whitespace-only lines are skipped. A line longer than
 * `maxLineBytes` is discarded up to its LF and reported once. At end of input an unterminated
 * tail is delivered as a last line, marked `unterminated`.
 *
 * `strict` (a judge reading a peer it does not trust, the kit): a BOM is kept and a blank line
 * is delivered, so the reader can call them what they are (not JSON).
 */
export type Frame =
  { kind: 'line'; text: string; unterminated?: true } | { kind: 'invalid_utf8' } | { kind: 'too_long'; bytes: number }

export interface FramerOptions {
  /** Keep a leading BOM and deliver blank lines (default false: drop and skip them). */
  strict?: boolean
}

const LF = 0x0a
const CR = 0x0d
const BOM = [0xef, 0xbb, 0xbf]
const EMPTY = new Uint8Array(0)

function concat(parts: readonly Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!
  const out = new Uint8Array(size)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** True when `bytes` is the start of the BOM (all of it when `whole`). */
const bomPrefix = (bytes: Uint8Array, whole: boolean): boolean =>
  (whole ? bytes.length >= 3 : bytes.length < 3) && BOM.every((b, i) => i >= bytes.length || bytes[i] === b)

export class LineFramer {
  readonly maxLineBytes: number
  readonly #strict: boolean
  #parts: Uint8Array[] = []
  #size = 0
  #overflow = false
  #overflowBytes = 0
  #atStart: boolean
  // ignoreBOM: a BOM is dropped only at the start of the stream (below), never per line.
  #decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  #head: Uint8Array = EMPTY

  constructor(maxLineBytes: number, opts: FramerOptions = {}) {
    this.maxLineBytes = maxLineBytes
    this.#strict = opts.strict ?? false
    this.#atStart = !this.#strict
  }

  /** Feed bytes; returns the frames they complete, in order. */
  push(chunk: Uint8Array): Frame[] {
    let buf = chunk
    if (this.#atStart) {
      // The BOM may arrive split across reads: hold back up to 3 leading bytes until decided.
      buf = this.#head.length ? concat([this.#head, buf], this.#head.length + buf.length) : buf
      if (bomPrefix(buf, false)) {
        this.#head = buf.slice()
        return []
      }
      this.#head = EMPTY
      this.#atStart = false
      if (bomPrefix(buf, true)) buf = buf.subarray(3)
    }
    const frames: Frame[] = []
    let start = 0
    for (let i = buf.indexOf(LF, start); i !== -1; i = buf.indexOf(LF, start)) {
      this.#append(buf.subarray(start, i))
      const f = this.#finishLine()
      if (f) frames.push(f)
      start = i + 1
    }
    this.#append(buf.subarray(start))
    return frames
  }

  /** End of input: the unterminated tail, if any, as a last frame. */
  end(): Frame[] {
    if (this.#atStart && this.#head.length) {
      // Only part of a BOM, then end of input: those bytes are data.
      this.#atStart = false
      this.#append(this.#head)
      this.#head = EMPTY
    }
    if (this.#size === 0 && !this.#overflow) return []
    const f = this.#finishLine()
    if (f?.kind === 'line') return [{ ...f, unterminated: true }]
    return f ? [f] : []
  }

  #append(part: Uint8Array): void {
    if (part.length === 0) return
    if (this.#overflow) {
      this.#overflowBytes += part.length
      return
    }
    if (this.#size + part.length > this.maxLineBytes + 1) {
      // +1 leaves room for a CR that a CRLF ending will strip.
      this.#overflow = true
      this.#overflowBytes = this.#size + part.length
      this.#parts = []
      this.#size = 0
      return
    }
    // A copy: the caller may reuse its buffer once push returns.
    this.#parts.push(part.slice())
    this.#size += part.length
  }

  #finishLine(): Frame | undefined {
    if (this.#overflow) {
      const bytes = this.#overflowBytes
      this.#overflow = false
      this.#overflowBytes = 0
      return { kind: 'too_long', bytes }
    }
    let line = concat(this.#parts, this.#size)
    this.#parts = []
    this.#size = 0
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1)
    if (line.length > this.maxLineBytes) return { kind: 'too_long', bytes: line.length }
    let text: string
    try {
      text = this.#decoder.decode(line)
    } catch {
      return { kind: 'invalid_utf8' }
    }
    return !this.#strict && text.trim() === '' ? undefined : { kind: 'line', text }
  }
}
