/**
 * One cancellation token per turn. Cancelling aborts the model stream and the running tool
 * (Bash kills its process group) through the signal, and runs the release hooks registered
 * by the turn (pending permission requests).
 */
export class TurnToken {
  readonly #controller = new AbortController()
  readonly #hooks = new Set<() => void>()
  #why: string | undefined

  get signal(): AbortSignal {
    return this.#controller.signal
  }

  get cancelled(): boolean {
    return this.#controller.signal.aborted
  }

  /** Run `fn` when the turn is cancelled (at once if it already is); returns an unregister. */
  onCancel(fn: () => void): () => void {
    if (this.cancelled) {
      fn()
      return () => {}
    }
    this.#hooks.add(fn)
    return () => this.#hooks.delete(fn)
  }

  /** Why the turn was cancelled, when the canceller said (a server shutdown); undefined: a client's cancel. */
  get reason(): string | undefined {
    return this.#why
  }

  cancel(reason?: string): void {
    if (this.cancelled) return
    this.#why = reason
    this.#controller.abort(new CancelledError(reason ?? 'cancelled'))
    for (const fn of [...this.#hooks]) fn()
    this.#hooks.clear()
  }
}

export class CancelledError extends Error {
  override name = 'CancelledError'
}

export const isCancellation = (err: unknown, token: TurnToken): boolean =>
  token.cancelled || (err instanceof Error && (err.name === 'CancelledError' || err.name === 'AbortError'))
