/**
 * Known models: context window and price per million tokens (USD) for input, output, cache
 * read and cache write. A model that is not here still works — its tokens are counted, its
 * cost is null (never guessed) and it gets its provider's conservative context window.
 *
 * Sources, transcribed 2025-10-15 from the providers' public price lists (standard tier, no
 * batch discount):
 * - Anthropic: https://docs.anthropic.com/en/docs/about-claude/pricing (input ≤ 200K tokens;
 *   cache write = the 5-minute cache write price; the >200K long-context rates of Sonnet 4 and
 *   4.5, and the 1-hour cache write, are not modelled). Context windows:
 *   https://docs.anthropic.com/en/docs/about-claude/models/overview (200K; the 1M-token beta
 *   needs a header Chimera does not send).
 * - OpenAI: https://platform.openai.com/docs/pricing (input / cached input / output; OpenAI
 *   charges nothing for cache writes). Context windows from each model's page under
 *   https://platform.openai.com/docs/models.
 * Models released after that date (for example Claude Sonnet 4.6) are deliberately absent
 * until a price is transcribed from the source: a missing row costs null, a wrong row lies.
 */

export type ProviderName = 'anthropic' | 'openai'

export interface ModelInfo {
  provider: ProviderName
  /** Context window in tokens. */
  context: number
  /** USD per million tokens. */
  price: { input: number; output: number; cacheRead: number; cacheWrite: number }
  /** Other ids of the same model (dated snapshots, `-latest` aliases). */
  aliases?: string[]
}

const anthropic = (
  context: number,
  input: number,
  output: number,
  cacheWrite: number,
  cacheRead: number,
  aliases: string[],
): ModelInfo => ({
  provider: 'anthropic',
  context,
  price: { input, output, cacheRead, cacheWrite },
  aliases,
})

const openai = (
  context: number,
  input: number,
  cachedInput: number,
  output: number,
  aliases: string[] = [],
): ModelInfo => ({
  provider: 'openai',
  context,
  price: { input, output, cacheRead: cachedInput, cacheWrite: 0 },
  aliases,
})

/** The table (canonical id → info). */
export const MODELS: Readonly<Record<string, ModelInfo>> = {
  // Anthropic: context, input, output, cache write (5 min), cache read.
  'claude-opus-4-5': anthropic(200_000, 5, 25, 6.25, 0.5, ['claude-opus-4-5-20251101']),
  'claude-opus-4-1': anthropic(200_000, 15, 75, 18.75, 1.5, ['claude-opus-4-1-20250805']),
  'claude-opus-4-0': anthropic(200_000, 15, 75, 18.75, 1.5, ['claude-opus-4-20250514']),
  'claude-sonnet-4-5': anthropic(200_000, 3, 15, 3.75, 0.3, ['claude-sonnet-4-5-20250929']),
  'claude-sonnet-4-0': anthropic(200_000, 3, 15, 3.75, 0.3, ['claude-sonnet-4-20250514']),
  'claude-3-7-sonnet-latest': anthropic(200_000, 3, 15, 3.75, 0.3, ['claude-3-7-sonnet-20250219']),
  'claude-haiku-4-5': anthropic(200_000, 1, 5, 1.25, 0.1, ['claude-haiku-4-5-20251001']),
  'claude-3-5-haiku-latest': anthropic(200_000, 0.8, 4, 1, 0.08, ['claude-3-5-haiku-20241022']),
  'claude-3-haiku-20240307': anthropic(200_000, 0.25, 1.25, 0.3, 0.03, []),
  // OpenAI: context, input, cached input, output.
  'gpt-5': openai(400_000, 1.25, 0.125, 10, ['gpt-5-2025-08-07']),
  'gpt-5-mini': openai(400_000, 0.25, 0.025, 2, ['gpt-5-mini-2025-08-07']),
  'gpt-5-nano': openai(400_000, 0.05, 0.005, 0.4, ['gpt-5-nano-2025-08-07']),
  'gpt-4.1': openai(1_047_576, 2, 0.5, 8, ['gpt-4.1-2025-04-14']),
  'gpt-4.1-mini': openai(1_047_576, 0.4, 0.1, 1.6, ['gpt-4.1-mini-2025-04-14']),
  'gpt-4.1-nano': openai(1_047_576, 0.1, 0.025, 0.4, ['gpt-4.1-nano-2025-04-14']),
  'gpt-4o': openai(128_000, 2.5, 1.25, 10, ['gpt-4o-2024-08-06', 'gpt-4o-2024-11-20']),
  'gpt-4o-mini': openai(128_000, 0.15, 0.075, 0.6, ['gpt-4o-mini-2024-07-18']),
  o3: openai(200_000, 2, 0.5, 8, ['o3-2025-04-16']),
  'o4-mini': openai(200_000, 1.1, 0.275, 4.4, ['o4-mini-2025-04-16']),
  'o3-mini': openai(200_000, 1.1, 0.55, 4.4, ['o3-mini-2025-01-31']),
  o1: openai(200_000, 15, 7.5, 60, ['o1-2024-12-17']),
}

/** Context windows for models not in the table (conservative: compaction starts early rather than late). */
export const DEFAULT_CONTEXT: Readonly<Record<string, number>> = {
  // Every Claude model since Claude 3 has at least 200K tokens.
  anthropic: 200_000,
  // Every current OpenAI chat model has at least 128K tokens.
  openai: 128_000,
  // Local servers often run small windows (llama.cpp and Ollama default to 4K–8K).
  'openai-compatible': 8_192,
}

const byId = new Map<string, { id: string; info: ModelInfo }>()
for (const [id, info] of Object.entries(MODELS))
  for (const name of [id, ...(info.aliases ?? [])]) byId.set(name, { id, info })

/** The table row for a bare model id (canonical or alias), if known. */
export function lookupModel(model: string): { id: string; info: ModelInfo } | undefined {
  return byId.get(model)
}

/** The canonical ids a provider knows, for model pickers. */
export function knownModels(provider: ProviderName): string[] {
  return Object.entries(MODELS)
    .filter(([, info]) => info.provider === provider)
    .map(([id]) => id)
}
