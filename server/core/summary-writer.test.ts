/**
 * When a session's summary is written: at once, or once for the turns that end within the delay;
 * `settled()` covers the last turn's end for every caller, retries a failed write, and nothing is
 * written after `drop()`. Only the delay timer is faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SummaryWriter, TURN_SUMMARY_DELAY_MS } from './summary-writer.ts'

/** A writer over a counter the test moves, whose writes the test settles one by one. */
function harness(delayMs?: number) {
  let seq = 0
  const written: number[] = []
  const pending: { seq: number; ok: () => void; fail: (err: Error) => void }[] = []
  const failures: unknown[] = []
  const w = new SummaryWriter({
    ...(delayMs !== undefined ? { delayMs } : {}),
    seq: () => seq,
    write: () =>
      new Promise<void>((ok, fail) => {
        const at = seq
        pending.push({ seq: at, ok: () => (written.push(at), ok()), fail })
      }),
    failed: (err) => failures.push(err),
  })
  return {
    w,
    written,
    pending,
    failures,
    event: (): number => ++seq,
    /** Settle the oldest write begun (ok or failed), and let its reactions run. */
    async settle(fail = false): Promise<void> {
      const p = pending.shift()
      if (!p) throw new Error('no write under way')
      if (fail) p.fail(new Error('disk full'))
      else p.ok()
      await new Promise((r) => setImmediate(r))
    },
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r))

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('SummaryWriter', () => {
  it('writes once for the turns that end within the delay, at the counter of that moment', async () => {
    const h = harness()
    h.w.turnEnded(h.event())
    h.w.turnEnded(h.event())
    h.w.turnEnded(h.event())
    expect(h.pending).toHaveLength(0)
    vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
    expect(h.pending.map((p) => p.seq)).toEqual([3])
    await h.settle()
    expect(h.written).toEqual([3])
    vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
    expect(h.pending).toHaveLength(0)
  })

  it('now() writes at once, covers a due write, and joins a write at the same counter', async () => {
    const h = harness()
    h.w.turnEnded(h.event())
    const a = h.w.now()
    const b = h.w.now()
    expect(h.pending).toHaveLength(1)
    vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
    expect(h.pending).toHaveLength(1)
    await h.settle()
    await Promise.all([a, b])
    expect(h.written).toEqual([1])
  })

  it('settled() holds every caller until the write covering the last turn end is done', async () => {
    const h = harness()
    await h.w.settled() // no turn ended: nothing owed
    h.w.turnEnded(h.event())
    const done: number[] = []
    const callers = [1, 2, 3].map((n) => h.w.settled().then(() => done.push(n)))
    await tick()
    expect(h.pending.map((p) => p.seq)).toEqual([1])
    expect(done).toEqual([])
    await h.settle()
    await Promise.all(callers)
    expect(done.sort()).toEqual([1, 2, 3])
    // Written: nothing more to wait for, nothing written again.
    await h.w.settled()
    expect(h.pending).toHaveLength(0)
  })

  it('a write of an earlier counter does not cover a later turn end', async () => {
    const h = harness()
    h.event()
    void h.w.now() // a rename, say, at 1
    h.w.turnEnded(h.event()) // the turn ends at 2 while it is under way
    let settled = false
    const s = h.w.settled().then(() => (settled = true))
    await h.settle()
    await tick()
    expect(settled).toBe(false)
    expect(h.pending.map((p) => p.seq)).toEqual([2])
    await h.settle()
    await s
    expect(h.written).toEqual([1, 2])
  })

  it('a failed write is reported and written again at the next settled()', async () => {
    const h = harness()
    h.w.turnEnded(h.event())
    const first = h.w.settled()
    await h.settle(true)
    await first // never rejects
    expect(h.failures).toHaveLength(1)
    const again = h.w.settled()
    expect(h.pending.map((p) => p.seq)).toEqual([1])
    await h.settle()
    await again
    expect(h.written).toEqual([1])
  })

  it('after close() a failed write is not written again by settled() (the store may have let the session go)', async () => {
    const h = harness()
    h.w.close()
    h.w.turnEnded(h.event())
    const first = h.w.settled()
    await h.settle(true)
    await first
    expect(h.failures).toHaveLength(1)
    await h.w.settled()
    expect(h.pending).toHaveLength(0)
  })

  it('flush() begins a due write and waits for every write under way', async () => {
    const h = harness()
    h.event()
    void h.w.now()
    h.w.turnEnded(h.event())
    let flushed = false
    const f = h.w.flush().then(() => (flushed = true))
    expect(h.pending.map((p) => p.seq)).toEqual([1, 2])
    await h.settle()
    expect(flushed).toBe(false)
    await h.settle()
    await f
    expect(h.written).toEqual([1, 2])
  })

  it('with no delay (instances sharing a store) each turn end is written at once', () => {
    const h = harness(0)
    h.w.turnEnded(h.event())
    h.w.turnEnded(h.event())
    expect(h.pending.map((p) => p.seq)).toEqual([1, 2])
  })

  it('after close() a turn end is written at once; after drop() nothing is written', async () => {
    const closed = harness()
    closed.w.turnEnded(closed.event())
    closed.w.close()
    expect(closed.pending.map((p) => p.seq)).toEqual([1])
    closed.w.turnEnded(closed.event())
    expect(closed.pending.map((p) => p.seq)).toEqual([1, 2])

    const dropped = harness()
    dropped.w.turnEnded(dropped.event())
    dropped.w.drop()
    vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
    dropped.w.turnEnded(dropped.event())
    void dropped.w.now()
    await dropped.w.settled()
    await dropped.w.flush()
    vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
    expect(dropped.pending).toHaveLength(0)
  })
})
