/**
 * Tighter contracts: the SSE envelopes are discriminated on `type` (the payload must be that
 * type's), every HTTP error code the server can send is in the spec's enum (and nothing else
 * passes), and the generator orders by code point, never by locale.
 */
import { describe, expect, it } from 'vitest'
import { ErrorBodySchema, LoopEventEnvelopeSchema, SseEnvelopeSchema } from '../../generated/schemas.gen.ts'
import { byCodePoint } from '../../specs/codegen/lib/order.ts'
import { readFileSync } from 'node:fs'

const ts = '2026-04-25T09:12:08Z'

describe('SSE envelopes are discriminated on type', () => {
  it('metadata must be the payload of the named type', () => {
    expect(
      SseEnvelopeSchema.safeParse({ id: 'evt-1', type: 'text_delta', metadata: { text: 'hi', step: 1 }, ts }).success,
    ).toBe(true)
    // A step payload under text_delta passed when the envelope was a plain union.
    expect(SseEnvelopeSchema.safeParse({ id: 'evt-1', type: 'text_delta', metadata: { step: 1 }, ts }).success).toBe(
      false,
    )
    expect(
      SseEnvelopeSchema.safeParse({ id: 'evt-1', type: 'tool_progress', metadata: { call_id: 'c', stdout: 'x' }, ts })
        .success,
    ).toBe(false)
    expect(SseEnvelopeSchema.safeParse({ id: 'evt-1', type: 'no_such_type', metadata: {}, ts }).success).toBe(false)
  })

  it('the singular stream envelope too', () => {
    expect(
      LoopEventEnvelopeSchema.safeParse({
        message_id: 'm',
        type: 'turn_end',
        data: { stop_reason: 'end_turn' },
        turn: 0,
        timestamp: 1,
      }).success,
    ).toBe(true)
    expect(
      LoopEventEnvelopeSchema.safeParse({
        message_id: 'm',
        type: 'turn_end',
        data: { text: 'x' },
        turn: 0,
        timestamp: 1,
      }).success,
    ).toBe(false)
  })
})

describe('HTTP error codes', () => {
  it('every code the server code raises is in the spec enum, and an unknown code is refused', () => {
    const sources = [
      'server/http/app.ts',
      'server/http/errors.ts',
      'server/http/guard.ts',
      'client/wire/http/auth.ts',
      'client/wire/http/body.ts',
      'client/wire/http/body-errors.ts',
      'client/wire/http/pipeline.ts',
    ]
      .map((p) => readFileSync(p, 'utf8'))
      .join('\n')
    const raised = [...sources.matchAll(/new HttpError\(\s*'([a-z_]+)'/g)].map((m) => m[1]!)
    expect(raised.length).toBeGreaterThan(5)
    for (const code of new Set(raised)) expect(ErrorBodySchema.safeParse({ error: code }).success, code).toBe(true)
    for (const code of ['misdirected_request', 'origin_not_allowed', 'invalid_authorization', 'internal_error'])
      expect(ErrorBodySchema.safeParse({ error: code }).success).toBe(true)
    expect(ErrorBodySchema.safeParse({ error: 'made_up' }).success).toBe(false)
  })
})

describe('generator ordering', () => {
  it('sorts by code point: upper case before lower case, regardless of locale', () => {
    const keys = ['b', 'B', '_x', 'a', 'Z', 'é', 'e']
    expect([...keys].sort(byCodePoint)).toEqual(['B', 'Z', '_x', 'a', 'b', 'e', 'é'])
    // localeCompare would interleave cases: the generator must not depend on it.
    expect([...keys].sort((a, b) => a.localeCompare(b, 'en'))).not.toEqual([...keys].sort(byCodePoint))
  })
})
