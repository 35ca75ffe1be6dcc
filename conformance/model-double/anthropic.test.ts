/**
 * The model double's Anthropic Messages wire, driven over a real socket by Anthropic's official
 * SDK (`@anthropic-ai/sdk`), which parses every event into its own message accumulator: streamed
 * thinking (with its signature) and text, a tool round trip (input streamed as
 * `input_json_delta`, the result sent back as a `tool_result` block, an `is_error` result),
 * non-streamed answers, count_tokens, the model list, and errors as the SDK's typed errors
 * (before output, mid-stream, bad key, unknown model, bad request).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import Anthropic, { APIError } from '@anthropic-ai/sdk'
import { DOUBLE_MODEL, startModelDouble, type ModelDouble } from './server.ts'
import type { MessagesRequest } from './anthropic-input.ts'

const KEY = 'anthropic-double-key'
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

const client = (apiKey = KEY) => new Anthropic({ apiKey, baseURL: double.origin, maxRetries: 0 })
const base = { model: DOUBLE_MODEL, max_tokens: 1024 }
const TOOLS = [
  {
    name: 'read_file',
    description: 'read a file',
    input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
  },
]

describe('the model double on the Anthropic Messages API, driven by @anthropic-ai/sdk', () => {
  it('streams !think as a signed thinking block and !say as a text block, with usage', async () => {
    const prompt = '!think weighing it\n!say hello anthropic world'
    const stream = client().messages.stream({ ...base, messages: [{ role: 'user', content: prompt }] })
    const texts: string[] = []
    const thoughts: string[] = []
    stream.on('text', (t) => texts.push(t))
    stream.on('thinking', (t) => thoughts.push(t))
    const msg = await stream.finalMessage()
    expect(texts.join('')).toBe('hello anthropic world')
    expect(texts.length).toBeGreaterThan(1)
    expect(thoughts.join('')).toBe('weighing it')
    expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const thinking = msg.content[0] as Anthropic.ThinkingBlock
    expect(thinking.thinking).toBe('weighing it')
    expect(thinking.signature).not.toBe('')
    expect(msg.stop_reason).toBe('end_turn')
    expect(msg.usage.input_tokens).toBe(Math.ceil(prompt.length / 4))
    expect(msg.usage.output_tokens).toBe(Math.ceil(('weighing it'.length + 'hello anthropic world'.length) / 4))
  })

  it('runs a tool round trip: tool_use streamed as input_json_delta, the tool_result read back', async () => {
    const first = await client()
      .messages.stream({
        ...base,
        tools: TOOLS,
        messages: [{ role: 'user', content: '!say reading\n!call read_file {"path":"notes.txt","n":[1,2,3]}' }],
      })
      .finalMessage()
    expect(first.stop_reason).toBe('tool_use')
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!
    expect(use.name).toBe('read_file')
    expect(use.input).toEqual({ path: 'notes.txt', n: [1, 2, 3] })
    const history: Anthropic.MessageParam[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<reminder>context</reminder>' },
          { type: 'text', text: '!call read_file {"path":"notes.txt"}' },
        ],
      },
      { role: 'assistant', content: first.content },
    ]
    const ok = await client()
      .messages.stream({
        ...base,
        tools: TOOLS,
        messages: [
          ...history,
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'alpha\nbeta' }] }],
          },
        ],
      })
      .finalMessage()
    expect(ok.content).toEqual([{ type: 'text', text: 'read_file ok: alpha' }])
    expect(ok.stop_reason).toBe('end_turn')
    const read = double.requests.at(-1)!.body as MessagesRequest
    expect(read.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: use.id, content: 'alpha\nbeta', isError: false })
    const failed = await client().messages.create({
      ...base,
      tools: TOOLS,
      messages: [
        ...history,
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: use.id, content: 'no such file', is_error: true }],
        },
      ],
    })
    expect(failed.content).toEqual([{ type: 'text', text: 'read_file error: no such file' }])
  })

  it('reads notes beside tool results as notes, and a prompt sent there after a cancel as the prompt', async () => {
    const use = { type: 'tool_use' as const, id: 'toolu_x', name: 'Write', input: { file_path: 'a' } }
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: '!call Write {"file_path":"a"}' },
      { role: 'assistant', content: [use] },
    ]
    const result = {
      type: 'tool_result' as const,
      tool_use_id: 'toolu_x',
      content: 'The user rejected this tool use',
      is_error: true,
    }
    const noted = await client().messages.create({
      ...base,
      messages: [
        ...history,
        { role: 'user', content: [result, { type: 'text', text: '<system-reminder>note</system-reminder>' }] },
      ],
    })
    expect(noted.content).toEqual([{ type: 'text', text: 'Write error: The user rejected this tool use' }])
    const next = await client().messages.create({
      ...base,
      messages: [
        ...history,
        {
          role: 'user',
          content: [
            result,
            { type: 'text', text: '[Request interrupted by user]' },
            { type: 'text', text: '!say after cancel' },
          ],
        },
      ],
    })
    expect(next.content).toEqual([{ type: 'text', text: 'after cancel' }])
  })

  it('plays the newest prompt of a user message that merges turns (a failed prompt sent again beside the next)', async () => {
    const content = [
      { type: 'text' as const, text: '<system-reminder>note</system-reminder>' },
      { type: 'text' as const, text: '!fail 400 refused' },
      { type: 'text' as const, text: '!say recovered' },
    ]
    expect((await client().messages.create({ ...base, messages: [{ role: 'user', content }] })).content).toEqual([
      { type: 'text', text: 'recovered' },
    ])
    const plain = await client().messages.create({
      ...base,
      messages: [{ role: 'user', content: [content[0]!, { type: 'text', text: 'hello' }] }],
    })
    expect(plain.content).toEqual([
      {
        type: 'text',
        text: 'offline model: no provider is configured. You said: <system-reminder>note</system-reminder>\nhello',
      },
    ])
  })

  it('answers at once when not streaming: thinking, text and tool_use blocks', async () => {
    const msg = await client().messages.create({
      ...base,
      tools: TOOLS,
      messages: [{ role: 'user', content: '!think hm\n!say done\n!call read_file {"path":"x"}' }],
    })
    expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use'])
    expect(msg.content[1]).toEqual({ type: 'text', text: 'done' })
    expect(msg.content[2]).toMatchObject({ type: 'tool_use', name: 'read_file', input: { path: 'x' } })
    expect(msg.stop_reason).toBe('tool_use')
  })

  it('counts tokens and lists its models', async () => {
    const prompt = '!say twelve chars'
    expect(
      await client().messages.countTokens({ model: DOUBLE_MODEL, messages: [{ role: 'user', content: prompt }] }),
    ).toEqual({ input_tokens: Math.ceil(prompt.length / 4) })
    const ids: string[] = []
    for await (const m of client().models.list()) ids.push(m.id)
    expect(ids).toEqual([DOUBLE_MODEL])
  })

  it("maps failures to the SDK's typed errors in Anthropic's error shape", async () => {
    const rate = await client()
      .messages.create({ ...base, messages: [{ role: 'user', content: '!fail 429 slow down' }] })
      .catch((e: unknown) => e)
    expect(rate).toBeInstanceOf(Anthropic.RateLimitError)
    expect((rate as APIError).error).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: '429 slow down' },
    })
    const key = await client('wrong')
      .messages.create({ ...base, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)
    expect(key).toBeInstanceOf(Anthropic.AuthenticationError)
    const model = await client()
      .messages.create({ ...base, model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)
    expect(model).toBeInstanceOf(Anthropic.NotFoundError)
    expect((model as APIError).error).toMatchObject({ error: { type: 'not_found_error' } })
    const bad = await client()
      .messages.create({ ...base, messages: [{ role: 'user', content: '!call read_file {not json' }] })
      .catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError)
  })

  it('ends a stream that fails after output with an error event the SDK raises', async () => {
    const stream = client().messages.stream({
      ...base,
      messages: [{ role: 'user', content: '!say partial\n!fail 529 overloaded now' }],
    })
    const texts: string[] = []
    stream.on('text', (t) => texts.push(t))
    const err = await stream.finalMessage().catch((e: unknown) => e)
    expect(texts.join('')).toBe('partial')
    expect(err).toBeInstanceOf(Anthropic.APIError)
    expect(String((err as Error).message)).toContain('overloaded now')
    expect(String((err as Error).message)).toContain('overloaded_error')
  })
})
