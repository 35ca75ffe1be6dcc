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
    if (this.#items.length) return Promise.resolve(this.#items.shift())
    if (this.#closed) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== done)
        resolve(undefined)
      }, ms)
      const done = (v: T | undefined) => {
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
