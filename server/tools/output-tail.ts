/**
 * A bounded text buffer that keeps only the last `limit` characters of what was pushed, for
 * command output that may be arbitrarily long.
 */
export class OutputTail {
  private chunks: string[] = []
  private held = 0
  /** Characters pushed in all. */
  total = 0

  /** Most characters kept. */
  readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  /** Append a chunk. */
  push(chunk: string): void {
    if (chunk === '') return
    this.chunks.push(chunk)
    this.held += chunk.length
    this.total += chunk.length
    if (this.held > 2 * this.limit) this.compact()
  }

  private compact(): void {
    const kept = this.chunks.join('').slice(-this.limit)
    this.chunks = [kept]
    this.held = kept.length
  }

  /** True when more than `limit` characters were pushed, so the start was dropped. */
  get truncated(): boolean {
    return this.total > this.limit
  }

  /** The last `limit` characters. */
  text(): string {
    if (this.held > this.limit) this.compact()
    return this.chunks.join('')
  }
}
