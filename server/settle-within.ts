/** Waiting for a promise, bounded: what a shutdown or a take-over does with work it cannot cancel. */

/**
 * Wait for `p` to settle (either way), at most `ms`, and not past `signal` aborting: true when it
 * settled. `unref`: the wait does not keep the process running by itself.
 */
export function settleWithin(
  p: Promise<unknown>,
  ms: number,
  o: { signal?: AbortSignal; unref?: boolean } = {},
): Promise<boolean> {
  const { signal } = o
  return new Promise((resolve) => {
    const done = (settled: boolean): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', gaveUp)
      resolve(settled)
    }
    const gaveUp = (): void => done(false)
    const timer = setTimeout(gaveUp, ms)
    if (o.unref) timer.unref()
    signal?.addEventListener('abort', gaveUp, { once: true })
    if (signal?.aborted) gaveUp()
    p.then(
      () => done(true),
      () => done(true),
    )
  })
}
