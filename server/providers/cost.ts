/**
 * What one model call costs, from the catalog's prices. `input_tokens` excludes cached input
 * (common.yaml Usage), so the four counts are disjoint and each has its own price; output
 * includes reasoning tokens, which providers bill as output. An unknown model costs null.
 */
import type { ModelInfo } from './catalog.ts'

export interface TokenCounts {
  input_tokens: number
  output_tokens: number
  cache_read_tokens?: number
  cache_write_tokens?: number
}

/** USD, rounded to a billionth of a dollar (floating-point noise below that is not money). */
export function costUsd(tokens: TokenCounts, info: ModelInfo | undefined): number | null {
  if (!info) return null
  const p = info.price
  const micro =
    tokens.input_tokens * p.input +
    tokens.output_tokens * p.output +
    (tokens.cache_read_tokens ?? 0) * p.cacheRead +
    (tokens.cache_write_tokens ?? 0) * p.cacheWrite
  return Math.round((micro / 1_000_000) * 1e9) / 1e9
}
