/** Waiting for a promise, bounded: what a shutdown or a take-over does with work it cannot cancel. */

/** Wait for `p` to settle (either way), at most `ms`, and not past `signal` aborting. */
export function settleWithin(p: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
    if (signal?.aborted) done()
    p.then(done, done)
  })
}
