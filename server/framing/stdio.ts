/**
 * Byte streams ⇄ frames for the stdio transports: a reader that feeds a LineFramer and a
 * writer that serialises whole lines (one JSON value per line, never interleaved, respecting
 * back-pressure).
 */
import type { Readable, Writable } from 'node:stream'
import { LineFramer, type Frame } from './ndjson.ts'

/** Read `input` to its end, calling `onFrame` for each frame in order (awaiting each). */
export async function readFrames(input: Readable, maxLineBytes: number, onFrame: (f: Frame) => void | Promise<void>): Promise<void> {
  const framer = new LineFramer(maxLineBytes)
  for await (const chunk of input) {
    for (const f of framer.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) await onFrame(f)
  }
  for (const f of framer.end()) await onFrame(f)
}

/** Serialised line writer: each value becomes exactly one line; writes never interleave. */
export class LineWriter {
  #out: Writable
  #chain: Promise<void> = Promise.resolve()
  #closed = false

  constructor(out: Writable) {
    this.#out = out
    out.on('error', () => {
      this.#closed = true
    })
  }

  /** Queue `value` as one JSON line; resolves once it is handed to the stream. */
  write(value: unknown): Promise<void> {
    const line = `${JSON.stringify(value)}\n`
    this.#chain = this.#chain.then(
      () =>
        new Promise<void>((resolve) => {
          if (this.#closed || this.#out.destroyed || this.#out.writableEnded) return resolve()
          if (this.#out.write(line)) resolve()
          else this.#out.once('drain', () => resolve())
        }),
    )
    return this.#chain
  }

  /** Resolves when everything queued so far has been written. */
  flush(): Promise<void> {
    return this.#chain
  }
}
