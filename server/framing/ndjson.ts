/**
 * Newline-delimited framing for the stdio transports (ACP and JSON-lines RPC).
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
 * tail is delivered as a last line.
 */
export type Frame = { kind: 'line'; text: string } | { kind: 'invalid_utf8' } | { kind: 'too_long'; bytes: number }

const LF = 0x0a
const BOM = Buffer.from([0xef, 0xbb, 0xbf])
const CR = 0x0d

export class LineFramer {
  readonly maxLineBytes: number
  #parts: Buffer[] = []
  #size = 0
  #overflow = false
  #overflowBytes = 0
  #atStart = true
  // ignoreBOM: a BOM is dropped only at the start of the stream (below), never per line.
  #decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  #head: Buffer = Buffer.alloc(0)

  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes
  }

  /** Feed bytes; returns the frames they complete, in order. */
  push(chunk: Uint8Array): Frame[] {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.#atStart) {
      // The BOM may arrive split across reads: hold back up to 3 leading bytes until decided.
      buf = Buffer.concat([this.#head, buf])
      if (buf.length < 3 && BOM.subarray(0, buf.length).equals(buf)) {
        this.#head = Buffer.from(buf)
        return []
      }
      this.#head = Buffer.alloc(0)
      this.#atStart = false
      if (buf.subarray(0, 3).equals(BOM)) buf = buf.subarray(3)
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
      this.#head = Buffer.alloc(0)
    }
    const f = this.#size > 0 || this.#overflow ? this.#finishLine() : undefined
    return f ? [f] : []
  }

  #append(part: Buffer): void {
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
    this.#parts.push(Buffer.from(part))
    this.#size += part.length
  }

  #finishLine(): Frame | undefined {
    if (this.#overflow) {
      const bytes = this.#overflowBytes
      this.#overflow = false
      this.#overflowBytes = 0
      return { kind: 'too_long', bytes }
    }
    let line = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#size)
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
    return text.trim() === '' ? undefined : { kind: 'line', text }
  }
}
