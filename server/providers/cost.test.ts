/** Prices and context windows from the catalog; the cost of a call; unknown models cost null. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_CONTEXT, knownModels, lookupModel, MODELS } from './catalog.ts'
import { costUsd } from './cost.ts'

describe('the catalog', () => {
  it('finds a model by its id or an alias (dated snapshot)', () => {
    expect(lookupModel('claude-sonnet-4-5')?.id).toBe('claude-sonnet-4-5')
    expect(lookupModel('claude-sonnet-4-5-20250929')?.id).toBe('claude-sonnet-4-5')
    expect(lookupModel('gpt-4o-2024-08-06')?.id).toBe('gpt-4o')
    expect(lookupModel('gpt-4o-2024-05-13')).toBeUndefined() // priced differently: not guessed from gpt-4o
    expect(lookupModel('claude-sonnet-4-6')).toBeUndefined()
  })

  it('every row has a provider, a window and non-negative prices; ids and aliases are unique', () => {
    const names = Object.entries(MODELS).flatMap(([id, m]) => [id, ...(m.aliases ?? [])])
    expect(new Set(names).size).toBe(names.length)
    for (const m of Object.values(MODELS)) {
      expect(['anthropic', 'openai']).toContain(m.provider)
      expect(m.context).toBeGreaterThan(0)
      for (const p of Object.values(m.price)) expect(p).toBeGreaterThanOrEqual(0)
    }
    expect(knownModels('anthropic')).toContain('claude-haiku-4-5')
    expect(knownModels('openai')).toContain('gpt-4o')
    expect(DEFAULT_CONTEXT['openai-compatible']).toBeLessThanOrEqual(8192)
  })
})

describe('costUsd', () => {
  it('prices the four disjoint counts per million tokens', () => {
    const sonnet = lookupModel('claude-sonnet-4-5')!.info
    // 1M of each: $3 + $15 + $0.30 + $3.75
    expect(
      costUsd({ input_tokens: 1e6, output_tokens: 1e6, cache_read_tokens: 1e6, cache_write_tokens: 1e6 }, sonnet),
    ).toBe(22.05)
    expect(costUsd({ input_tokens: 1000, output_tokens: 500 }, sonnet)).toBe(0.0105)
    const mini = lookupModel('gpt-4o-mini')!.info
    expect(costUsd({ input_tokens: 2000, output_tokens: 100, cache_read_tokens: 8000 }, mini)).toBe(
      (2000 * 0.15 + 100 * 0.6 + 8000 * 0.075) / 1e6,
    )
  })

  it('an unknown model costs null, never a guessed number', () => {
    expect(costUsd({ input_tokens: 1000, output_tokens: 1000 }, undefined)).toBeNull()
  })
})
