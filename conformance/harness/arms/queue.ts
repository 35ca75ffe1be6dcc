/** A FIFO of received items with timed waits: what every arm's `next()` reads from. */
export class Inbox<T> {
  #items: T[] = []
  #waiters: ((v: T | undefined) => void)[] = []
  #closed = false

  push(item: T): void {
    const w = this.#waiters.shift()
    if (w) w(item)
    else this.#items.push(item)
  }

  /** No more items will come: pending and future waits resolve empty at once. */
  close(): void {
    this.#closed = true
    for (const w of this.#waiters.splice(0)) w(undefined)
  }

  /** The next item, or undefined when none arrives within `ms` (or the inbox is closed). */
  next(ms: number): Promise<T | undefined> {
    return this.nextWhere(() => true, ms)
  }

  /**
   * The first item `wanted` picks, or undefined when none arrives within `ms`: items it passes
   * over stay queued, in order, for the next reads.
   */
  nextWhere(wanted: (item: T) => boolean, ms: number): Promise<T | undefined> {
    const i = this.#items.findIndex(wanted)
    if (i >= 0) return Promise.resolve(this.#items.splice(i, 1)[0])
    if (this.#closed) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== done)
        resolve(undefined)
      }, ms)
      const done = (v: T | undefined): void => {
        if (v !== undefined && !wanted(v)) {
          // Not this one: it is queued for the next read and the wait goes on.
          this.#items.push(v)
          this.#waiters.unshift(done)
          return
        }
        clearTimeout(timer)
        resolve(v)
      }
      this.#waiters.push(done)
    })
  }

  /** Drop unread items that `unwanted` picks (a replaced stream's leftovers). */
  discard(unwanted: (item: T) => boolean): void {
    this.#items = this.#items.filter((i) => !unwanted(i))
  }

  get pending(): number {
    return this.#items.length
  }
}
