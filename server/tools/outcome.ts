/**
 * Small helpers for building `ToolOutcome`s, so every tool reports failures the same way.
 */
import type { ToolOutcome } from './types.ts'

/** A failed outcome with `error` (and optional structured `data`). */
export function fail(error: string, data?: unknown): ToolOutcome {
  return data === undefined ? { ok: false, error } : { ok: false, error, data }
}

/** A successful outcome with `output` (and optional structured `data`). */
export function succeed(output: string, data?: unknown): ToolOutcome {
  return data === undefined ? { ok: true, output } : { ok: true, output, data }
}

/** The message of an unknown thrown value, for error strings. */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message
  return String(e)
}

/** The `code` of a Node system error (`ENOENT`, `EACCES`…), if any. */
export function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}
