/**
 * Buffers of one size handed out again once their user gave them back
 * (docs/decisions/0435-replay-buffers-reused.md): a replay reads the segment a page at a time and
 * fills response chunks, and each fresh buffer of those is memory outside the V8 heap, which on
 * Node 24 starts a full collection every few tens of MB. Taking them from a pool bounds what a
 * replay allocates instead of making it proportional to the session.
 *
 * A buffer must be given back only when nothing holds a view of it any more: the pool hands it
 * out again at once. Buffers not given back (a client that went away with a write in flight, a
 * caller that keeps its records) are simply left to the collector. The pool keeps at most
 * `maxFree` buffers, and lets them go when none was taken for `idleMs`.
 */
export class BufferPool {
  readonly size: number
  readonly #maxFree: number
  readonly #idleMs: number
  #free: Buffer[] = []
  readonly #mine = new WeakSet<ArrayBufferLike>()
  #taken = 0
  #allocated = 0
  #given = 0
  #trim: NodeJS.Timeout | undefined

  constructor(size: number, maxFree: number, idleMs = 10_000) {
    this.size = size
    this.#maxFree = maxFree
    this.#idleMs = idleMs
  }

  /** A buffer of `size` bytes (contents undefined), owned by the caller until `give`. */
  take(): Buffer {
    this.#taken++
    const free = this.#free.pop()
    if (free) return free
    this.#allocated++
    // Its own ArrayBuffer (not a slice of Node's shared pool), which `give` knows it by.
    const buf = Buffer.allocUnsafeSlow(this.size)
    this.#mine.add(buf.buffer)
    return buf
  }

  /**
   * Give back a buffer `take` returned, once nothing reads or writes it any more (it is handed out
   * again as it is). Other buffers are ignored.
   */
  give(buf: Buffer): void {
    if (buf.length !== this.size || buf.byteOffset !== 0 || !this.#mine.has(buf.buffer)) return
    this.#given++
    if (this.#free.length >= this.#maxFree || this.#free.includes(buf)) return
    this.#free.push(buf)
    if (!this.#trim) {
      let seen = this.#taken
      this.#trim = setInterval(() => {
        if (this.#taken !== seen) {
          seen = this.#taken
          return
        }
        this.#free = []
        clearInterval(this.#trim)
        this.#trim = undefined
      }, this.#idleMs)
      this.#trim.unref()
    }
  }

  /** Buffers taken, of them newly allocated, and given back (dropped ones too) so far; free now. */
  stats(): { taken: number; allocated: number; given: number; free: number } {
    return { taken: this.#taken, allocated: this.#allocated, given: this.#given, free: this.#free.length }
  }
}
