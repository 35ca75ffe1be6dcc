/**
 * The Anthropic provider against msw serving the Messages API's SSE wire format: thinking with
 * its signature, text, a tool_use whose input arrives as input_json_delta pieces, usage with
 * cache read/write tokens and its cost; the history sent back (signed thinking, tool results);
 * and every failure — 401, 404 unknown model, 429 with retry-after (honoured, and refused when
 * too long), 500 retried then given up, a mid-stream error event, a cut stream, no network —
 * as a clear ProviderError that never shows the key.
 */
import { http, HttpResponse } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ChatMessage } from '../../generated/schemas.gen.ts'
import {
  capturingLogger,
  drain,
  fixture,
  joined,
  recordedRetry,
  sseEvents,
  sseResponse,
  user,
  type CallResult,
} from './fixtures/provider-harness.ts'
import { buildModelRegistry } from './registry.ts'
import type { Provider } from './types.ts'

const KEY = 'sk-ant-api03-CHIMERA-FAKE-KEY-7f3a9c'
const URL_MESSAGES = 'https://api.anthropic.com/v1/messages'
const MODEL = 'anthropic/claude-sonnet-4-5'

const server = setupServer()
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

function setup(env: Record<string, string> = {}) {
  const logger = capturingLogger()
  const retry = recordedRetry()
  const registry = buildModelRegistry({ ANTHROPIC_API_KEY: KEY, ...env }, { model: MODEL, logger, retry })
  const provider = registry.providerFor(MODEL) as Provider
  return { logger, retry, provider }
}

/** Handlers answering in turn; records each request body and its headers. */
function answer(...responses: (() => Response)[]) {
  const seen: { body: Record<string, unknown>; headers: Headers }[] = []
  server.use(
    http.post(URL_MESSAGES, async ({ request }) => {
      seen.push({ body: (await request.json()) as Record<string, unknown>, headers: request.headers })
      return (responses[Math.min(seen.length - 1, responses.length - 1)] ?? (() => HttpResponse.error()))()
    }),
  )
  return seen
}

const apiError =
  (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
  () =>
    HttpResponse.json({ type: 'error', error: { type, message } }, { status, headers })

function expectNoKey(r: CallResult, lines: string[]): void {
  expect(r.error?.message ?? '').not.toContain(KEY)
  expect(JSON.stringify(r.events)).not.toContain(KEY)
  for (const l of lines) expect(l).not.toContain(KEY)
}

describe('anthropic: a streamed reply', () => {
  it('maps thinking + signature, text, streamed tool input, the tool call, usage with cache tokens and cost, and the finish reason', async () => {
    const seen = answer(() => sseResponse(sseEvents(fixture('anthropic-thinking-tool.sse'))))
    const { provider } = setup()
    const r = await drain(provider, MODEL, [user('What does the README say?')])
    expect(r.error).toBeUndefined()
    expect(r.events.map((e) => e.type)).toEqual([
      'reasoning',
      'reasoning',
      'reasoning',
      'text',
      'text',
      'tool_input_start',
      'tool_input_delta',
      'tool_input_delta',
      'tool_call',
      'usage',
      'finish',
    ])
    expect(joined(r.events, 'reasoning')).toBe('The user wants the README. I will read it.')
    expect(r.events[2]).toEqual({
      type: 'reasoning',
      text: '',
      signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
    })
    expect(joined(r.events)).toBe('Let me read the README.')
    expect(r.events[5]).toEqual({ type: 'tool_input_start', call_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', tool: 'Read' })
    expect(
      r.events
        .filter((e) => e.type === 'tool_input_delta')
        .map((e) => (e as { delta: string }).delta)
        .join(''),
    ).toBe('{"path": "README.md"}')
    expect(r.events[8]).toEqual({
      type: 'tool_call',
      call: { call_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', tool: 'Read', args: { path: 'README.md' } },
    })
    // claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    const cost = (472 * 3 + 89 * 15 + 2048 * 0.3 + 1024 * 3.75) / 1e6
    expect(r.events[9]).toEqual({
      type: 'usage',
      input_tokens: 472,
      output_tokens: 89,
      cache_read_tokens: 2048,
      cache_write_tokens: 1024,
      cost_usd: Number(cost.toFixed(9)),
    })
    expect(r.events[10]).toEqual({ type: 'finish', reason: 'tool_use' })

    expect(seen).toHaveLength(1)
    expect(seen[0]!.headers.get('x-api-key')).toBe(KEY)
    expect(seen[0]!.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What does the README say?' }] }],
    })
    expect(seen[0]!.body.tools).toEqual([
      expect.objectContaining({ name: 'Read', input_schema: expect.objectContaining({ required: ['path'] }) }),
    ])
  })

  it('sends the history back: signed thinking, text and tool_use, then the tool results (errors flagged), and the compaction summary as system', async () => {
    const seen = answer(() => sseResponse(sseEvents(fixture('anthropic-text.sse'))))
    const { provider } = setup()
    const history: ChatMessage[] = [
      { role: 'system', content: 'Summary of earlier turns.' },
      user('What does the README say?'),
      {
        role: 'assistant',
        content: 'Let me read the README.',
        reasoning: [{ text: 'I will read it.', signature: 'sig-1' }, { text: 'unsigned (dropped)' }],
        tool_calls: [
          { call_id: 'toolu_1', tool: 'Read', args: { path: 'README.md' } },
          { call_id: 'toolu_2', tool: 'Read', args: { path: 'MISSING.md' } },
        ],
      },
      { role: 'tool', content: 'hello', tool_result: { call_id: 'toolu_1', tool: 'Read', ok: true, output: 'hello' } },
      {
        role: 'tool',
        content: 'no such file',
        tool_result: { call_id: 'toolu_2', tool: 'Read', ok: false, error: 'no such file' },
      },
    ]
    const r = await drain(provider, MODEL, history)
    expect(r.error).toBeUndefined()
    expect(joined(r.events)).toBe('The README says hello.')
    expect(r.events.at(-2)).toEqual({
      type: 'usage',
      input_tokens: 1210,
      output_tokens: 12,
      cache_read_tokens: 3072,
      cache_write_tokens: 0,
      cost_usd: Number(((1210 * 3 + 12 * 15 + 3072 * 0.3) / 1e6).toFixed(9)),
    })
    expect(r.events.at(-1)).toEqual({ type: 'finish', reason: 'end_turn' })
    const body = seen[0]!.body as { system: unknown; messages: { role: string; content: unknown[] }[] }
    expect(body.system).toEqual([{ type: 'text', text: 'Summary of earlier turns.' }])
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I will read it.', signature: 'sig-1' },
        { type: 'text', text: 'Let me read the README.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'README.md' } },
        { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { path: 'MISSING.md' } },
      ],
    })
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'Error: no such file', is_error: true },
      ],
    })
  })
})

describe('anthropic: failures are clear provider errors without the key', () => {
  it('401: names the key variable, is not retried, and does not echo the upstream text', async () => {
    const seen = answer(apiError(401, 'authentication_error', `invalid x-api-key ${KEY.slice(0, 12)}`))
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error?.name).toBe('ProviderError')
    expect(r.error?.message).toBe(
      'anthropic: https://api.anthropic.com/v1 refused the credentials (HTTP 401); check ANTHROPIC_API_KEY',
    )
    expect(r.error?.status).toBe(401)
    expect(seen).toHaveLength(1)
    expect(retry.waits).toEqual([])
    expectNoKey(r, logger.lines)
  })

  it('404 for a model that does not exist', async () => {
    answer(apiError(404, 'not_found_error', 'model: claude-nope-9'))
    const { logger } = setup()
    const registry = buildModelRegistry(
      { ANTHROPIC_API_KEY: KEY },
      { model: 'anthropic/claude-nope-9', logger, retry: recordedRetry() },
    )
    const r = await drain(registry.providerFor('anthropic/claude-nope-9')!, 'anthropic/claude-nope-9', [user('hi')])
    expect(r.error?.message).toBe(
      'anthropic: model "claude-nope-9" was not found at https://api.anthropic.com/v1 (HTTP 404): model: claude-nope-9',
    )
    expect(r.error?.status).toBe(404)
    expectNoKey(r, logger.lines)
  })

  it('429 with retry-after: waits what the server asked, then succeeds', async () => {
    const seen = answer(
      apiError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', {
        'retry-after': '7',
      }),
      () => sseResponse(sseEvents(fixture('anthropic-text.sse'))),
    )
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error).toBeUndefined()
    expect(joined(r.events)).toBe('The README says hello.')
    expect(seen).toHaveLength(2)
    expect(retry.waits).toEqual([7000])
    expect(logger.lines.some((l) => l.includes('rate limited (HTTP 429)') && l.includes('retrying in 7000 ms'))).toBe(
      true,
    )
    expectNoKey(r, logger.lines)
  })

  it('429 asking for longer than the policy waits fails at once, saying how long', async () => {
    const seen = answer(apiError(429, 'rate_limit_error', 'rate limited', { 'retry-after': '120' }))
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error?.message).toBe('anthropic: rate limited (HTTP 429); the server asks to wait 120 s: rate limited')
    expect(seen).toHaveLength(1)
    expect(retry.waits).toEqual([])
    expectNoKey(r, logger.lines)
  })

  it('500: retried with exponential backoff, bounded, then a clear error', async () => {
    const seen = answer(apiError(500, 'api_error', 'Internal server error'))
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error?.message).toBe('anthropic: server error (HTTP 500) after 4 attempts: Internal server error')
    expect(r.error?.status).toBe(500)
    expect(seen).toHaveLength(4)
    expect(retry.waits).toEqual([1000, 2000, 4000])
    expectNoKey(r, logger.lines)
  })

  it('an error event in the middle of the stream (overloaded) ends the call after the text so far, without a retry', async () => {
    const events = sseEvents(fixture('anthropic-text.sse')).slice(0, 3)
    const overloaded =
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    const seen = answer(() => sseResponse([...events, overloaded]))
    const { provider, logger } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(joined(r.events)).toBe('The README says ')
    expect(r.error?.message).toBe('anthropic: the model reported an error: Overloaded')
    expect(seen).toHaveLength(1)
    expectNoKey(r, logger.lines)
  })

  it('a stream cut in the middle: a prefix of the reply, then a clear error, no retry', async () => {
    answer(() => sseResponse(sseEvents(fixture('anthropic-thinking-tool.sse'))))
    const whole = await drain(setup().provider, MODEL, [user('hi')])
    const seen = answer(() => sseResponse(sseEvents(fixture('anthropic-thinking-tool.sse')), { cutAfter: 9 }))
    const { provider, logger } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    // What was already on its way may or may not arrive; nothing after the cut does.
    expect(r.events).toEqual(whole.events.slice(0, r.events.length))
    expect(r.events.some((e) => e.type === 'tool_call' || e.type === 'usage' || e.type === 'finish')).toBe(false)
    expect(r.error?.message).toBe('anthropic: the response stream was cut off (UND_ERR_SOCKET)')
    expect(seen).toHaveLength(1)
    expectNoKey(r, logger.lines)
  })

  it('a stream that closes cleanly before message_stop is not taken for a whole reply', async () => {
    answer(() => sseResponse(sseEvents(fixture('anthropic-text.sse')).slice(0, 5)))
    const { provider, logger } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(joined(r.events)).toBe('The README says hello.')
    expect(r.events.some((e) => e.type === 'usage' || e.type === 'finish')).toBe(false)
    expect(r.error?.message).toBe('anthropic: the response stream ended before the model finished')
    expectNoKey(r, logger.lines)
  })

  it('no network: retried, then "cannot reach" the endpoint', async () => {
    const seen = answer(() => HttpResponse.error())
    const { provider, logger, retry } = setup({ ANTHROPIC_BASE_URL: 'https://api.anthropic.com/v1' })
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error?.message).toMatch(
      /^anthropic: cannot reach https:\/\/api\.anthropic\.com\/v1 \(.+\) after 4 attempts$/,
    )
    expect(seen).toHaveLength(4)
    expect(retry.waits).toEqual([1000, 2000, 4000])
    expectNoKey(r, logger.lines)
  })

  it('cancelling ends the call with the abort reason, not a provider error', async () => {
    answer(() => sseResponse(sseEvents(fixture('anthropic-thinking-tool.sse')), { cutAfter: 1000 }))
    const { provider } = setup()
    const ctl = new AbortController()
    const events: string[] = []
    const reason = new Error('cancelled by test')
    let caught: unknown
    try {
      for await (const e of provider.stream({ model: MODEL, messages: [user('hi')], tools: [], signal: ctl.signal })) {
        events.push(e.type)
        if (events.length === 2) ctl.abort(reason)
      }
    } catch (e) {
      caught = e
    }
    expect(caught).toBe(reason)
    expect(events).toEqual(['reasoning', 'reasoning'])
  })
})
