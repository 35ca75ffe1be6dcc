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

  #waiting = new Set<() => void>()

  constructor(out: Writable) {
    this.#out = out
    const closed = (): void => {
      this.#closed = true
      for (const w of this.#waiting) w()
      this.#waiting.clear()
    }
    out.on('error', closed)
    out.on('close', closed)
  }

  /** Queue `value` as one JSON line; resolves once it is handed to the stream. */
  write(value: unknown): Promise<void> {
    const line = `${JSON.stringify(value)}\n`
    this.#chain = this.#chain.then(
      () =>
        new Promise<void>((resolve) => {
          if (this.#closed || this.#out.destroyed || this.#out.writableEnded) return resolve()
          if (this.#out.write(line)) return resolve()
          // A reader that stops reading holds the writer here (bounded memory); a closed one releases it.
          const done = (): void => {
            this.#waiting.delete(done)
            this.#out.off('drain', done)
            resolve()
          }
          this.#waiting.add(done)
          this.#out.once('drain', done)
        }),
    )
    return this.#chain
  }

  /** True once the output errored or closed: further writes are dropped. */
  get closed(): boolean {
    return this.#closed
  }

  /** Resolves when everything queued so far has been written. */
  flush(): Promise<void> {
    return this.#chain
  }
}
