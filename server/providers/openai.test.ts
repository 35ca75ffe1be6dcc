/**
 * The OpenAI provider against msw serving the Responses API's SSE wire format (the API the
 * @ai-sdk/openai provider uses by default for chat models): text, a function call whose
 * arguments arrive as deltas, usage with cached input and reasoning tokens and its cost; the
 * history sent back (function calls and their outputs, errors marked); and every failure —
 * 401 (whose upstream text echoes part of the key), 404 unknown model, 429 with retry-after,
 * 500, an error event mid-stream, a cut stream — as a clear ProviderError without the key.
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

const KEY = 'sk-proj-CHIMERA-FAKE-KEY-c0ffee42'
const URL_RESPONSES = 'https://api.openai.com/v1/responses'
const MODEL = 'openai/gpt-4o'

const server = setupServer()
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

function setup(model = MODEL) {
  const logger = capturingLogger()
  const retry = recordedRetry()
  const registry = buildModelRegistry({ OPENAI_API_KEY: KEY }, { model, logger, retry })
  return { logger, retry, provider: registry.providerFor(model) as Provider }
}

function answer(...responses: (() => Response)[]) {
  const seen: { body: Record<string, unknown>; headers: Headers }[] = []
  server.use(
    http.post(URL_RESPONSES, async ({ request }) => {
      seen.push({ body: (await request.json()) as Record<string, unknown>, headers: request.headers })
      return responses[Math.min(seen.length - 1, responses.length - 1)]!()
    }),
  )
  return seen
}

const apiError =
  (status: number, message: string, type: string, code: string | null, headers: Record<string, string> = {}) =>
  () =>
    HttpResponse.json({ error: { message, type, param: null, code } }, { status, headers })

function expectNoKey(r: CallResult, lines: string[]): void {
  for (const s of [r.error?.message ?? '', JSON.stringify(r.events), ...lines]) {
    expect(s).not.toContain(KEY)
    expect(s).not.toMatch(/sk-proj-\w/)
  }
}

describe('openai (Responses API): a streamed reply', () => {
  it('maps text, streamed function-call arguments, the call, usage with cached tokens and cost, and the finish reason', async () => {
    const seen = answer(() => sseResponse(sseEvents(fixture('openai-responses-tool.sse'))))
    const { provider } = setup()
    const r = await drain(provider, MODEL, [user('What does the README say?')])
    expect(r.error).toBeUndefined()
    expect(r.events.map((e) => e.type)).toEqual([
      'text',
      'text',
      'tool_input_start',
      'tool_input_delta',
      'tool_input_delta',
      'tool_call',
      'usage',
      'finish',
    ])
    expect(joined(r.events)).toBe('Reading the README.')
    expect(r.events[2]).toEqual({ type: 'tool_input_start', call_id: 'call_Qk7nTzPo4b5gYQ2mVx8r1LdE', tool: 'Read' })
    expect(r.events[5]).toEqual({
      type: 'tool_call',
      call: { call_id: 'call_Qk7nTzPo4b5gYQ2mVx8r1LdE', tool: 'Read', args: { path: 'README.md' } },
    })
    // gpt-4o: $2.50 in, $1.25 cached in, $10 out per million; 1834 input of which 1536 cached.
    expect(r.events[6]).toEqual({
      type: 'usage',
      input_tokens: 298,
      output_tokens: 42,
      cache_read_tokens: 1536,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: Number(((298 * 2.5 + 1536 * 1.25 + 42 * 10) / 1e6).toFixed(9)),
    })
    expect(r.events[7]).toEqual({ type: 'finish', reason: 'tool_use' })
    expect(seen[0]!.headers.get('authorization')).toBe(`Bearer ${KEY}`)
    expect(seen[0]!.body).toMatchObject({
      model: 'gpt-4o',
      stream: true,
      store: false,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What does the README say?' }] }],
    })
    expect(seen[0]!.body.tools).toEqual([expect.objectContaining({ type: 'function', name: 'Read' })])
  })

  it('counts reasoning tokens (part of output) for a reasoning model and prices it', async () => {
    answer(() => sseResponse(sseEvents(fixture('openai-responses-text.sse'))))
    const { provider } = setup('openai/o4-mini')
    const r = await drain(provider, 'openai/o4-mini', [user('hi')])
    expect(joined(r.events)).toBe('It says hello.')
    // o4-mini: $1.10 in, $4.40 out per million.
    expect(r.events.at(-2)).toEqual({
      type: 'usage',
      input_tokens: 2010,
      output_tokens: 268,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 192,
      cost_usd: Number(((2010 * 1.1 + 268 * 4.4) / 1e6).toFixed(9)),
    })
    expect(r.events.at(-1)).toEqual({ type: 'finish', reason: 'end_turn' })
  })

  it('sends the history back as input items: function calls, their outputs (errors marked), no foreign reasoning', async () => {
    const seen = answer(() => sseResponse(sseEvents(fixture('openai-responses-text.sse'))))
    const { provider, logger } = setup()
    const history: ChatMessage[] = [
      user('Read two files'),
      {
        role: 'assistant',
        content: '',
        reasoning: [{ text: 'offline thoughts' }],
        tool_calls: [
          { call_id: 'call_a', tool: 'Read', args: { path: 'a' } },
          { call_id: 'call_b', tool: 'Read', args: { path: 'b' } },
        ],
      },
      { role: 'tool', content: 'A', tool_result: { call_id: 'call_a', tool: 'Read', ok: true, output: 'A' } },
      { role: 'tool', content: 'gone', tool_result: { call_id: 'call_b', tool: 'Read', ok: false, error: 'gone' } },
    ]
    const r = await drain(provider, MODEL, history)
    expect(r.error).toBeUndefined()
    expect(seen[0]!.body.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Read two files' }] },
      { type: 'function_call', call_id: 'call_a', name: 'Read', arguments: '{"path":"a"}' },
      { type: 'function_call', call_id: 'call_b', name: 'Read', arguments: '{"path":"b"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'A' },
      { type: 'function_call_output', call_id: 'call_b', output: 'Error: gone' },
    ])
    // Nothing was dropped with a warning: unsigned reasoning is simply not sent to OpenAI.
    expect(logger.lines.filter((l) => l.includes('WARN'))).toEqual([])
  })
})

describe('openai: failures are clear provider errors without the key', () => {
  it('401 whose upstream text echoes part of the key: not retried, the text is not used', async () => {
    const seen = answer(
      apiError(
        401,
        `Incorrect API key provided: ${KEY.slice(0, 12)}****ee42. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      ),
    )
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error?.message).toBe(
      'openai: https://api.openai.com/v1 refused the credentials (HTTP 401); check OPENAI_API_KEY',
    )
    expect(seen).toHaveLength(1)
    expect(retry.waits).toEqual([])
    expectNoKey(r, logger.lines)
  })

  it('404 for a model that does not exist', async () => {
    answer(
      apiError(
        404,
        'The model `gpt-nope` does not exist or you do not have access to it.',
        'invalid_request_error',
        'model_not_found',
      ),
    )
    const { provider, logger } = setup('openai/gpt-nope')
    const r = await drain(provider, 'openai/gpt-nope', [user('hi')])
    expect(r.error?.message).toBe(
      'openai: model "gpt-nope" was not found at https://api.openai.com/v1 (HTTP 404): The model `gpt-nope` does not exist or you do not have access to it.',
    )
    expect(r.events).toEqual([])
    expectNoKey(r, logger.lines)
  })

  it("429 with retry-after then success; the wait is the server's", async () => {
    const seen = answer(
      apiError(429, 'Rate limit reached for gpt-4o', 'requests', 'rate_limit_exceeded', { 'retry-after': '2' }),
      () => sseResponse(sseEvents(fixture('openai-responses-tool.sse'))),
    )
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error).toBeUndefined()
    expect(r.events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
    expect(seen).toHaveLength(2)
    expect(retry.waits).toEqual([2000])
    expectNoKey(r, logger.lines)
  })

  it('500 retried with backoff, then given up', async () => {
    const seen = answer(apiError(500, 'The server had an error while processing your request.', 'server_error', null))
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(r.error?.message).toBe(
      'openai: server error (HTTP 500) after 4 attempts: The server had an error while processing your request.',
    )
    expect(seen).toHaveLength(4)
    expect(retry.waits).toEqual([1000, 2000, 4000])
    expectNoKey(r, logger.lines)
  })

  it('an error event after output: the text so far, then the error, no retry', async () => {
    const events = sseEvents(fixture('openai-responses-tool.sse')).slice(0, 5)
    const failure =
      'event: error\ndata: {"type":"error","sequence_number":5,"code":"server_error","message":"The server had an error while processing your request.","param":null}\n\n'
    const seen = answer(() => sseResponse([...events, failure]))
    const { provider, logger } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(joined(r.events)).toBe('Reading ')
    expect(r.error?.message).toBe(
      'openai: the model reported an error: The server had an error while processing your request.',
    )
    expect(seen).toHaveLength(1)
    expectNoKey(r, logger.lines)
  })

  it('a stream cut in the middle of the function-call arguments: a prefix of the reply, then a clear error', async () => {
    answer(() => sseResponse(sseEvents(fixture('openai-responses-tool.sse'))))
    const whole = await drain(setup().provider, MODEL, [user('hi')])
    answer(() => sseResponse(sseEvents(fixture('openai-responses-tool.sse')), { cutAfter: 11 }))
    const { provider, logger } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    // What was already on its way may or may not arrive; nothing after the cut does.
    expect(r.events).toEqual(whole.events.slice(0, r.events.length))
    expect(r.events.some((e) => e.type === 'tool_call' || e.type === 'usage' || e.type === 'finish')).toBe(false)
    expect(r.error?.message).toBe('openai: the response stream was cut off (UND_ERR_SOCKET)')
    expectNoKey(r, logger.lines)
  })

  it('a stream that closes cleanly before response.completed is not taken for a whole reply', async () => {
    answer(() => sseResponse(sseEvents(fixture('openai-responses-text.sse')).slice(0, 7)))
    const { provider, logger } = setup()
    const r = await drain(provider, MODEL, [user('hi')])
    expect(joined(r.events)).toBe('It says hello.')
    expect(r.events.some((e) => e.type === 'usage' || e.type === 'finish')).toBe(false)
    expect(r.error?.message).toBe('openai: the response stream ended before the model finished')
    expectNoKey(r, logger.lines)
  })
})
