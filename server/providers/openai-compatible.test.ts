/**
 * The OpenAI-compatible provider end to end over real loopback sockets: against the model
 * double (conformance/model-double/) for replies — text, `reasoning_content` as reasoning,
 * streamed tool calls, usage with a null cost (an unpriced server) — and for the failures the
 * double can produce (401 with a wrong key, 404 unknown model, 429 with retry-after, 500, an
 * error mid-stream); against a closed port (unreachable base URL) and a server that drops the
 * connection mid-stream. The key appears in no event, no error and no log line.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ChatMessage } from '../../generated/schemas.gen.ts'
import { startModelDouble, type ModelDouble } from '../../conformance/model-double/server.ts'
import { capturingLogger, drain, joined, recordedRetry, user, type CallResult } from './fixtures/provider-harness.ts'
import { buildModelRegistry } from './registry.ts'
import type { Provider } from './types.ts'

const KEY = 'cmp-CHIMERA-FAKE-KEY-deadbeef99'
const MODEL = 'openai-compatible/chimera-double'

let double: ModelDouble
beforeAll(async () => {
  double = await startModelDouble({ apiKey: KEY })
})
afterAll(async () => {
  await double.close()
})
afterEach(() => {
  double.requests.length = 0
})

function setup(env: Record<string, string> = {}, model = MODEL) {
  const logger = capturingLogger()
  const retry = recordedRetry()
  const registry = buildModelRegistry(
    { CHIMERA_OPENAI_BASE_URL: double.url, CHIMERA_OPENAI_API_KEY: KEY, ...env },
    { model, logger, retry },
  )
  return { logger, retry, provider: registry.providerFor(model) as Provider }
}

function expectNoKey(r: CallResult, lines: string[]): void {
  for (const s of [r.error?.message ?? '', JSON.stringify(r.events), ...lines]) expect(s).not.toContain(KEY)
}

const chats = () => double.requests.filter((r) => r.path === '/v1/chat/completions')

describe('openai-compatible against the model double', () => {
  it('streams text, reasoning from reasoning_content, streamed tool-call arguments and the calls; usage counted, cost null', async () => {
    const { provider } = setup()
    const r = await drain(provider, MODEL, [
      user('!think let me look\n!say reading\n!call Read {"path":"README.md"}\n!call Read {"path":"docs/a.md"}'),
    ])
    expect(r.error).toBeUndefined()
    expect(joined(r.events, 'reasoning')).toBe('let me look')
    expect(joined(r.events)).toBe('reading')
    const starts = r.events.filter((e) => e.type === 'tool_input_start')
    expect(starts).toEqual([
      { type: 'tool_input_start', call_id: 'call_1_1', tool: 'Read' },
      { type: 'tool_input_start', call_id: 'call_1_2', tool: 'Read' },
    ])
    // The double splits arguments into 7-character pieces: several deltas per call.
    const deltas = r.events.filter((e) => e.type === 'tool_input_delta') as { call_id: string; delta: string }[]
    expect(deltas.filter((d) => d.call_id === 'call_1_1').length).toBeGreaterThan(1)
    expect(
      deltas
        .filter((d) => d.call_id === 'call_1_1')
        .map((d) => d.delta)
        .join(''),
    ).toBe('{"path":"README.md"}')
    expect(r.events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', call: { call_id: 'call_1_1', tool: 'Read', args: { path: 'README.md' } } },
      { type: 'tool_call', call: { call_id: 'call_1_2', tool: 'Read', args: { path: 'docs/a.md' } } },
    ])
    const usage = r.events.find((e) => e.type === 'usage')
    expect(usage).toMatchObject({
      type: 'usage',
      output_tokens: Math.ceil(
        ('let me look'.length +
          'reading'.length +
          'Read'.length * 2 +
          '{"path":"README.md"}'.length +
          '{"path":"docs/a.md"}'.length) /
          4,
      ),
      cost_usd: null,
    })
    expect(r.events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
    const body = chats()[0]!.body as { stream: boolean; includeUsage: boolean }
    expect(body).toMatchObject({ stream: true, includeUsage: true })
  })

  it('sends the history back: reasoning_content, tool_calls, tool results with errors marked; the double replies per result', async () => {
    const { provider } = setup()
    const history: ChatMessage[] = [
      user('!call Read {"path":"a"}\n!call Read {"path":"b"}'),
      {
        role: 'assistant',
        content: '',
        reasoning: [{ text: 'thinking aloud' }],
        tool_calls: [
          { call_id: 'c1', tool: 'Read', args: { path: 'a' } },
          { call_id: 'c2', tool: 'Read', args: { path: 'b' } },
        ],
      },
      {
        role: 'tool',
        content: 'first line\nsecond',
        tool_result: { call_id: 'c1', tool: 'Read', ok: true, output: 'first line\nsecond' },
      },
      {
        role: 'tool',
        content: 'no such file',
        tool_result: { call_id: 'c2', tool: 'Read', ok: false, error: 'no such file' },
      },
    ]
    const r = await drain(provider, MODEL, history)
    expect(joined(r.events)).toBe('Read ok: first line\nRead error: no such file')
    expect(r.events.at(-1)).toEqual({ type: 'finish', reason: 'end_turn' })
    const sent = (chats()[0]!.body as { messages: unknown[] }).messages
    expect(sent).toEqual([
      { role: 'user', content: '!call Read {"path":"a"}\n!call Read {"path":"b"}' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'thinking aloud',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'Read', arguments: '{"path":"a"}' } },
          { id: 'c2', type: 'function', function: { name: 'Read', arguments: '{"path":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'first line\nsecond' },
      { role: 'tool', tool_call_id: 'c2', content: 'Error: no such file' },
    ])
  })

  it('401 with a wrong key: not retried, names the key variable', async () => {
    const { provider, logger, retry } = setup({ CHIMERA_OPENAI_API_KEY: `${KEY}-wrong` })
    const r = await drain(provider, MODEL, [user('!say hi')])
    expect(r.error?.message).toBe(
      `openai-compatible: ${double.url} refused the credentials (HTTP 401); check CHIMERA_OPENAI_API_KEY`,
    )
    expect(retry.waits).toEqual([])
    expectNoKey(r, logger.lines)
  })

  it('404 for a model the server does not serve', async () => {
    const { provider, logger } = setup({}, 'openai-compatible/llama-nope')
    const r = await drain(provider, 'openai-compatible/llama-nope', [user('!say hi')])
    expect(r.error?.message).toBe(
      `openai-compatible: model "llama-nope" was not found at ${double.url} (HTTP 404): The model \`llama-nope\` does not exist.`,
    )
    expectNoKey(r, logger.lines)
  })

  it('429 with retry-after: every retry waits what the server asked, then a clear error', async () => {
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('!fail 429 slow down')])
    expect(r.error?.message).toBe('openai-compatible: rate limited (HTTP 429) after 4 attempts: 429 slow down')
    expect(retry.waits).toEqual([1000, 1000, 1000])
    expect(chats()).toHaveLength(4)
    expectNoKey(r, logger.lines)
  })

  it('500 before any output: retried with backoff, then a clear error', async () => {
    const { provider, logger, retry } = setup()
    const r = await drain(provider, MODEL, [user('!fail boom')])
    expect(r.error?.message).toBe('openai-compatible: server error (HTTP 500) after 4 attempts: boom')
    expect(r.error?.status).toBe(500)
    expect(retry.waits).toEqual([1000, 2000, 4000])
    expectNoKey(r, logger.lines)
  })

  it('an error after output arrives in the stream: the text so far, then the error, no retry', async () => {
    const { provider, logger } = setup()
    const r = await drain(provider, MODEL, [user('!say partial answer\n!fail boom')])
    expect(joined(r.events)).toBe('partial answer')
    expect(r.error?.message).toBe('openai-compatible: the model reported an error: boom')
    expect(chats()).toHaveLength(1)
    expectNoKey(r, logger.lines)
  })
})

describe('openai-compatible: the network fails', () => {
  it('an unreachable base URL (nothing listens): retried, then "cannot reach"', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as AddressInfo).port
        s.close(() => resolve(port))
      })
    })
    const { provider, logger, retry } = setup({ CHIMERA_OPENAI_BASE_URL: `http://127.0.0.1:${closed}/v1` })
    const r = await drain(provider, MODEL, [user('!say hi')])
    expect(r.error?.message).toBe(
      `openai-compatible: cannot reach http://127.0.0.1:${closed}/v1 (ECONNREFUSED) after 4 attempts`,
    )
    expect(retry.waits).toEqual([1000, 2000, 4000])
    expectNoKey(r, logger.lines)
  })

  it('a server that drops the connection mid-stream: a clear error, no retry', async () => {
    let requests = 0
    const chunk = (delta: object) =>
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`
    const dropper: Server = createServer((req, res) => {
      requests++
      req.resume()
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(chunk({ role: 'assistant', content: 'half an ' }))
      res.write(chunk({ content: 'answer' }), () => setTimeout(() => res.socket?.destroy(), 20))
    })
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', r))
    try {
      const url = `http://127.0.0.1:${(dropper.address() as AddressInfo).port}/v1`
      const { provider, logger } = setup({ CHIMERA_OPENAI_BASE_URL: url })
      const r = await drain(provider, MODEL, [user('!say hi')])
      expect(joined(r.events)).toBe('half an answer')
      expect(r.error?.message).toBe('openai-compatible: the response stream was cut off (UND_ERR_SOCKET)')
      expect(requests).toBe(1)
      expectNoKey(r, logger.lines)
    } finally {
      dropper.closeAllConnections()
      await new Promise<void>((r) => dropper.close(() => r()))
    }
  })
})
