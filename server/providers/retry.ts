/**
 * When a failed model call is tried again (docs/decisions/0040-provider-retry-policy.md): only
 * before any output was streamed, only for failures the SDK marks retryable (408, 409, 429,
 * 5xx, a connection that could not be made), at most `maxRetries` times; the wait is the
 * server's `retry-after-ms` / `retry-after` (seconds or an HTTP date) when it sends one, else
 * exponential backoff. A server that asks for more than `maxDelayMs` is not retried: the call
 * fails at once, saying how long the server asked to wait.
 */
import { APICallError } from 'ai'

export interface RetryPolicy {
  maxRetries: number
  /** First backoff delay; doubles per retry. */
  baseDelayMs: number
  /** The longest wait honoured; a longer retry-after fails the call instead. */
  maxDelayMs: number
  /** Waits `ms`, rejecting with the signal's reason when it aborts (injectable for tests). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = (): void => {
      clearTimeout(t)
      reject(signal.reason)
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  sleep: abortableSleep,
}

/** The server's requested wait in ms, if it sent one (`now` for HTTP dates). */
export function retryAfterMs(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined
  const h = (name: string): string | undefined =>
    headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1]
  const ms = Number.parseFloat(h('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return ms
  const raw = h('retry-after')?.trim()
  if (!raw) return undefined
  if (/^\d+(\.\d+)?$/.test(raw)) return Number.parseFloat(raw) * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; retryAfterMs?: number }

/** Whether to try again after failure number `attempt` (0-based) of a call that streamed nothing. */
export function decideRetry(err: unknown, attempt: number, policy: RetryPolicy): RetryDecision {
  if (!APICallError.isInstance(err) || !err.isRetryable) return { retry: false }
  const asked = retryAfterMs(err.responseHeaders)
  if (asked !== undefined && asked > policy.maxDelayMs) return { retry: false, retryAfterMs: asked }
  if (attempt >= policy.maxRetries) return { retry: false }
  return { retry: true, delayMs: asked ?? policy.baseDelayMs * 2 ** attempt }
}
