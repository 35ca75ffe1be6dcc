/** Provider errors are safe to show: secrets and key-shaped tokens are redacted. */
import { describe, expect, it } from 'vitest'
import { displayUrl } from './configure.ts'
import { redact, toProviderError } from './errors.ts'
import { ProviderError } from './types.ts'

describe('redact', () => {
  it('removes configured secrets, sk- keys, bearer tokens and key assignments', () => {
    expect(redact('key my-secret-value leaked', ['my-secret-value'])).toBe('key [redacted] leaked')
    expect(redact('Incorrect API key provided: sk-proj-abc123****wxyz.', [])).toBe(
      'Incorrect API key provided: [redacted]',
    )
    expect(redact('header Authorization: Bearer abc.def-ghi', [])).toBe('header Authorization: [redacted] [redacted]')
    expect(redact('sent Bearer abc.def-ghi', [])).toBe('sent Bearer [redacted]')
    expect(redact('{"x-api-key": "zzz-123"}', [])).toBe('{"x-api-key": "[redacted]"}')
    expect(redact('api_key=abc123&x=1', [])).toBe('api_key=[redacted]&x=1')
  })

  it('keeps one line and bounds the length', () => {
    expect(redact('a\n  b\tc', [])).toBe('a b c')
    expect(redact('x'.repeat(1000), []).length).toBe(300)
  })
})

describe('toProviderError', () => {
  const ctx = {
    provider: 'openai',
    model: 'gpt-4o',
    endpoint: 'https://api.openai.com/v1',
    keyVar: 'OPENAI_API_KEY',
    secrets: ['s3cr3t-key'],
  }

  it('an error object sent by the server (not an Error) is "the model reported an error", redacted', () => {
    expect(toProviderError({ message: 'bad s3cr3t-key' }, ctx, { attempts: 1, midStream: true }).message).toBe(
      'openai: the model reported an error: bad [redacted]',
    )
  })

  it('a ProviderError passes through, redacted, keeping its status', () => {
    const e = toProviderError(new ProviderError('x s3cr3t-key', { status: 418 }), ctx, {
      attempts: 1,
      midStream: false,
    })
    expect([e.message, e.status]).toEqual(['x [redacted]', 418])
  })
})

describe('displayUrl', () => {
  it('drops credentials, query and fragment', () => {
    expect(displayUrl('http://u:p@host:8080/v1/?key=abc#x')).toBe('http://host:8080/v1')
    expect(displayUrl('::')).toBe('(invalid URL)')
  })
})
