/** The retry policy: which failures are retried, how long to wait, and the bound. */
import { APICallError } from 'ai'
import { describe, expect, it } from 'vitest'
import { abortableSleep, decideRetry, DEFAULT_RETRY, retryAfterMs } from './retry.ts'

const failure = (statusCode: number | undefined, headers: Record<string, string> = {}) =>
  new APICallError({
    message: 'x',
    url: 'https://example.test',
    requestBodyValues: {},
    ...(statusCode !== undefined ? { statusCode } : { isRetryable: true }),
    responseHeaders: headers,
  })

describe('retryAfterMs', () => {
  it('reads retry-after-ms, retry-after seconds and retry-after HTTP dates', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250' })).toBe(250)
    expect(retryAfterMs({ 'retry-after': '7' })).toBe(7000)
    expect(retryAfterMs({ 'retry-after': '1.5' })).toBe(1500)
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, now)).toBe(30_000)
    expect(retryAfterMs({ 'Retry-After': '3' })).toBe(3000)
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined()
    expect(retryAfterMs(undefined)).toBeUndefined()
  })
})

describe('decideRetry', () => {
  const policy = { ...DEFAULT_RETRY, maxRetries: 3, baseDelayMs: 1000, maxDelayMs: 60_000 }

  it('retries 408, 409, 429, 5xx and connection failures with exponential backoff, at most maxRetries times', () => {
    for (const status of [408, 409, 429, 500, 503, 529])
      expect(decideRetry(failure(status), 0, policy)).toEqual({ retry: true, delayMs: 1000 })
    expect(decideRetry(failure(undefined), 0, policy)).toEqual({ retry: true, delayMs: 1000 })
    expect([0, 1, 2].map((a) => decideRetry(failure(500), a, policy))).toEqual(
      [1000, 2000, 4000].map((delayMs) => ({ retry: true, delayMs })),
    )
    expect(decideRetry(failure(500), 3, policy)).toEqual({ retry: false })
  })

  it("honours the server's retry-after; one longer than maxDelayMs is not waited for", () => {
    expect(decideRetry(failure(429, { 'retry-after': '5' }), 2, policy)).toEqual({ retry: true, delayMs: 5000 })
    expect(decideRetry(failure(429, { 'retry-after': '600' }), 0, policy)).toEqual({
      retry: false,
      retryAfterMs: 600_000,
    })
  })

  it('never retries client errors or errors that are not API calls', () => {
    for (const status of [400, 401, 403, 404, 422])
      expect(decideRetry(failure(status), 0, policy)).toEqual({ retry: false })
    expect(decideRetry(new TypeError('terminated'), 0, policy)).toEqual({ retry: false })
  })
})

describe('abortableSleep', () => {
  it('rejects with the abort reason as soon as the signal aborts', async () => {
    const ctl = new AbortController()
    const reason = new Error('stop')
    const p = abortableSleep(60_000, ctl.signal)
    ctl.abort(reason)
    await expect(p).rejects.toBe(reason)
  })
})
