/**
 * The fullStream mapping in isolation (usage without a report, refusals, invalid calls), and
 * the SDK's quietness: its warnings reach the injected logger, never stdout or the console.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startModelDouble, type ModelDouble } from '../../conformance/model-double/server.ts'
import { capturingLogger, drain, user } from './fixtures/provider-harness.ts'
import { SdkProvider } from './sdk-provider.ts'
import { StreamMapper, toCallUsage, toFinishReason, type Part } from './stream-events.ts'

describe('StreamMapper', () => {
  const mapper = () => new StreamMapper({ cost: () => 1, warn: () => {} })

  it('no usage reported: tokens 0 and cost null (unknown, not free)', () => {
    expect(toCallUsage(undefined, () => 5)).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: null,
    })
  })

  it('finish reasons', () => {
    expect(toFinishReason('stop', 'stop')).toBe('end_turn')
    expect(toFinishReason('tool-calls', 'tool_use')).toBe('tool_use')
    expect(toFinishReason('length', 'max_tokens')).toBe('max_tokens')
    expect(toFinishReason('content-filter', 'refusal')).toBe('refusal')
    expect(toFinishReason('content-filter', 'content_filter')).toBe('content_filter')
    expect(toFinishReason('other', undefined)).toBe('other')
  })

  it('an invalid tool call (arguments not an object) still becomes a call, with empty arguments for the loop to reject', () => {
    const part = {
      type: 'tool-call',
      toolCallId: 't1',
      toolName: 'Read',
      input: 'not json',
      invalid: true,
      dynamic: true,
      error: new Error('x'),
    } as unknown as Part
    expect(mapper().map(part)).toEqual([{ type: 'tool_call', call: { call_id: 't1', tool: 'Read', args: {} } }])
  })

  it('an error part is thrown', () => {
    const boom = new Error('boom')
    expect(() => mapper().map({ type: 'error', error: boom } as Part)).toThrow(boom)
  })
})

describe('the AI SDK stays quiet', () => {
  let double: ModelDouble
  beforeAll(async () => {
    double = await startModelDouble()
  })
  afterAll(async () => {
    await double.close()
  })

  it('its warnings go to the injected logger; nothing reaches stdout or the console; it calls no one but the server', async () => {
    const logger = capturingLogger()
    const sdk = createOpenAICompatible({ name: 'openai-compatible', baseURL: double.url, includeUsage: true })
    // The deprecated provider-options key makes the SDK emit a warning for this call.
    const provider = new SdkProvider({
      name: 'openai-compatible',
      languageModel: async (id) => sdk.chatModel(id),
      known: [],
      contextWindow: () => 8192,
      priced: false,
      reasoning: 'all',
      providerOptions: { 'openai-compatible': { user: 'someone' } },
      endpoint: double.url,
      keyVar: 'CHIMERA_OPENAI_API_KEY',
      secrets: [],
      logger,
    })
    const stdout = vi.spyOn(process.stdout, 'write')
    const consoles = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m))
    const realFetch = globalThis.fetch
    const urls: string[] = []
    globalThis.fetch = (input, init) => {
      urls.push(input instanceof Request ? input.url : String(input))
      return realFetch(input, init)
    }
    try {
      const r = await drain(provider, 'chimera-double', [user('!say hello')])
      expect(r.error).toBeUndefined()
      expect(stdout).not.toHaveBeenCalled()
      for (const c of consoles) expect(c).not.toHaveBeenCalled()
    } finally {
      globalThis.fetch = realFetch
      stdout.mockRestore()
      for (const c of consoles) c.mockRestore()
    }
    expect(logger.lines.some((l) => l.includes('WARN') && l.includes('deprecated'))).toBe(true)
    expect(urls).toEqual([`${double.url}/chat/completions`])
  })
})
