/**
 * Node byte streams ⇄ frames for the stdio transports (server, Node clients, kit): a reader that
 * feeds the LineFramer and a writer that serialises whole lines (one JSON value per line, never
 * interleaved, respecting back-pressure).
 */
import type { Readable, Writable } from 'node:stream'
import { LineFramer, type Frame, type FramerOptions } from './framer.ts'

/** Read `input` to its end, calling `onFrame` for each frame in order (awaiting each). */
export async function readFrames(
  input: Readable,
  maxLineBytes: number,
  onFrame: (f: Frame) => void | Promise<void>,
  opts: FramerOptions = {},
): Promise<void> {
  const framer = new LineFramer(maxLineBytes, opts)
  for await (const chunk of input) {
    for (const f of framer.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) await onFrame(f)
  }
  for (const f of framer.end()) await onFrame(f)
}

/** Serialised line writer: each value becomes exactly one line; writes never interleave. */
export class LineWriter {
  #out: Writable
  /** Settles once every line queued so far was handed to the stream. */
  #chain: Promise<void> = RESOLVED
  /** Lines queued behind a full stream (or behind each other). */
  #queued = 0
  #corked = false
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
    // Fast path: nothing queued, so writing now keeps the order; wait only when the stream is full.
    if (this.#queued === 0) {
      if (!this.#writable()) return RESOLVED
      this.#batch()
      if (this.#out.write(line)) return RESOLVED
      this.#chain = this.#drained()
      return this.#chain
    }
    return this.#enqueue(line)
  }

  #enqueue(line: string): Promise<void> {
    this.#queued++
    this.#chain = this.#chain.then(() => {
      this.#queued--
      if (!this.#writable()) return undefined
      this.#batch()
      if (this.#out.write(line)) return undefined
      return this.#drained()
    })
    return this.#chain
  }

  /** Lines written in the same tick go out in one writev (corked until the next tick). */
  #batch(): void {
    if (this.#corked) return
    this.#corked = true
    this.#out.cork()
    process.nextTick(() => {
      this.#corked = false
      this.#out.uncork()
    })
  }

  #writable(): boolean {
    return !(this.#closed || this.#out.destroyed || this.#out.writableEnded)
  }

  /** Resolves on `drain`, or when the stream closes (a reader that stops reading holds us here). */
  #drained(): Promise<void> {
    // Later writes queue behind this one until the stream drains.
    this.#queued++
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.#waiting.delete(done)
        this.#out.off('drain', done)
        this.#queued--
        resolve()
      }
      this.#waiting.add(done)
      this.#out.once('drain', done)
    })
  }

  /**
   * Resolves once nothing waits for the stream to drain (or it closed). Readers call it before
   * taking the next input frame, so a peer that stops reading stops being read: the answers it
   * does not read cannot pile up here without bound.
   */
  async ready(): Promise<void> {
    while (this.#queued > 0 && this.#writable()) await this.#chain
  }

  /** True once the output errored or closed: further writes are dropped. */
  get closed(): boolean {
    return this.#closed
  }

  /** Resolves when everything queued so far has been written. */
  flush(): Promise<void> {
    if (this.#corked) {
      this.#corked = false
      this.#out.uncork()
    }
    return this.#chain
  }
}

const RESOLVED: Promise<void> = Promise.resolve()
