/**
 * Any failure of a model call as a ProviderError whose message is safe to show: it names the
 * provider and what went wrong (the HTTP status, an unreachable endpoint, a cut stream), keeps
 * the upstream explanation where it helps, and never carries a key — the configured secrets
 * and anything shaped like a key or a bearer token are redacted, and the upstream text of an
 * authentication failure (which may echo part of the key) is not used at all.
 */
import { APICallError } from 'ai'
import { ProviderError } from './types.ts'

export interface ErrorContext {
  provider: string
  model: string
  /** The endpoint as shown to users (no credentials, no query). */
  endpoint: string
  /** The variable holding the key, for the hint on 401/403. */
  keyVar: string
  /** Values that must never appear in a message. */
  secrets: readonly string[]
}

const KEY_SHAPES = [
  /\bsk-[A-Za-z0-9_*.-]{4,}/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=*-]+/gi,
  /\b(x-api-key|api[_-]?key|authorization)(["']?\s*[:=]\s*["']?)[^\s"',}&;]+/gi,
]

/** `text` without secrets or key-shaped tokens, on one line, at most `max` characters. */
export function redact(text: string, secrets: readonly string[], max = 300): string {
  let out = text
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]')
  out = out.replace(KEY_SHAPES[0]!, '[redacted]')
  out = out.replace(KEY_SHAPES[1]!, (_m, scheme: string) => `${scheme} [redacted]`)
  out = out.replace(KEY_SHAPES[2]!, (_m, name: string, sep: string) => `${name}${sep}[redacted]`)
  out = out.replace(/\s+/g, ' ').trim()
  return out.length > max ? `${out.slice(0, max - 1)}…` : out
}

/** The network error code in a cause chain (ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET…). */
function networkCode(err: unknown): string | undefined {
  const seen = new Set<unknown>()
  let cur = err
  while (cur instanceof Error && !seen.has(cur)) {
    seen.add(cur)
    const code = (cur as { code?: unknown }).code
    if (typeof code === 'string') return code
    cur = cur.cause
  }
  return undefined
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; error?: { message?: unknown } }
    if (typeof e.message === 'string') return e.message
    if (typeof e.error?.message === 'string') return e.error.message
    try {
      return JSON.stringify(err)
    } catch {
      return 'unknown error'
    }
  }
  return String(err)
}

export interface FailureFacts {
  /** Attempts made (1 + retries). */
  attempts: number
  /** Whether the model had already streamed output when it failed. */
  midStream: boolean
  /** A retry-after longer than the retry policy waits, in ms. */
  retryAfterMs?: number
}

export function toProviderError(err: unknown, ctx: ErrorContext, facts: FailureFacts): ProviderError {
  if (err instanceof ProviderError)
    return new ProviderError(
      redact(err.message, ctx.secrets, 500),
      err.status === undefined ? {} : { status: err.status },
    )
  const p = ctx.provider
  const clean = (s: string): string => redact(s, ctx.secrets)
  const after = facts.attempts > 1 ? ` after ${facts.attempts} attempts` : ''
  if (APICallError.isInstance(err)) {
    const status = err.statusCode
    const upstream = clean(err.message)
    if (status === undefined) {
      const code = networkCode(err)
      const what = facts.midStream ? 'lost the connection to' : 'cannot reach'
      return new ProviderError(`${p}: ${what} ${ctx.endpoint} (${code ?? upstream})${after}`)
    }
    if (status >= 200 && status < 300) {
      // The answer started fine and broke while being read.
      const code = networkCode(err.cause)
      if (code) return new ProviderError(`${p}: the response stream was cut off (${code})`)
      return new ProviderError(`${p}: the response could not be read: ${clean(messageOf(err.cause ?? err))}`)
    }
    let text: string
    if (status === 401 || status === 403)
      text = `${p}: ${ctx.endpoint} refused the credentials (HTTP ${status}); check ${ctx.keyVar}`
    else if (status === 404)
      text = `${p}: model "${ctx.model}" was not found at ${ctx.endpoint} (HTTP 404): ${upstream}`
    else if (status === 429) {
      const wait =
        facts.retryAfterMs !== undefined ? `; the server asks to wait ${Math.ceil(facts.retryAfterMs / 1000)} s` : ''
      text = `${p}: rate limited (HTTP 429)${after}${wait}: ${upstream}`
    } else if (status >= 500) text = `${p}: server error (HTTP ${status})${after}: ${upstream}`
    else text = `${p}: request rejected (HTTP ${status}): ${upstream}`
    return new ProviderError(text, { status })
  }
  const msg = clean(messageOf(err))
  if (
    err instanceof Error &&
    (err.name === 'EndedEarlyError' ||
      (err.name === 'AI_InvalidResponseDataError' && /without a finish reason/i.test(err.message)))
  ) {
    return new ProviderError(`${p}: the response stream ended before the model finished`)
  }
  const code = networkCode(err)
  if (code || (err instanceof TypeError && /terminated|network|socket|fetch/i.test(err.message))) {
    return new ProviderError(`${p}: the response stream was cut off (${code ?? msg})`)
  }
  if (!(err instanceof Error)) return new ProviderError(`${p}: the model reported an error: ${msg}`)
  return new ProviderError(`${p}: ${msg}`)
}
