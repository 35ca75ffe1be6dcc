/**
 * The model double's Responses API wire (`POST /v1/responses`), checked two ways over a real
 * socket: by an independent client — the AI SDK's OpenAI provider in Responses mode
 * (`createOpenAI(...).responses(model)`), which validates every event against its own schemas —
 * for text, reasoning, a tool-call round trip (the result read back from a
 * `function_call_output` item), non-streamed answers and errors; and by reading the raw SSE
 * for the event order and fields Codex parses (`event:` names, `sequence_number`,
 * `output_item.added`/`done`, argument deltas, `response.completed` with usage,
 * `response.failed`, no `[DONE]`), custom tool calls, and the request errors.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createParser } from 'eventsource-parser'
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai'
import { createOpenAI } from '@ai-sdk/openai'
import * as z from 'zod'
import { DOUBLE_MODEL, startModelDouble, type ModelDouble } from './server.ts'
import type { ResponsesRequest } from './responses-input.ts'

const KEY = 'responses-double-key'
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

const model = () => createOpenAI({ baseURL: double.url, apiKey: KEY }).responses(DOUBLE_MODEL)

const post = (body: unknown) =>
  fetch(`${double.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

interface Sse {
  event: string | undefined
  data: Record<string, unknown> & { type: string; sequence_number: number }
}

async function events(res: Response): Promise<Sse[]> {
  const out: Sse[] = []
  const parser = createParser({ onEvent: (e) => out.push({ event: e.event, data: JSON.parse(e.data) as Sse['data'] }) })
  parser.feed(await res.text())
  return out
}

const user = (text: string) => [{ role: 'user', content: [{ type: 'input_text', text }] }]

describe('the model double on the Responses API, driven by the AI SDK', () => {
  it('streams !think as reasoning and !say as text; usage comes with response.completed', async () => {
    const r = streamText({ model: model(), prompt: '!think weighing it\n!say hello responses world', maxRetries: 0 })
    expect(await r.text).toBe('hello responses world')
    expect(await r.reasoningText).toBe('weighing it')
    expect(await r.finishReason).toBe('stop')
    const prompt = '!think weighing it\n!say hello responses world'
    expect((await r.usage).outputTokens).toBe(Math.ceil(('weighing it'.length + 'hello responses world'.length) / 4))
    expect((await r.usage).inputTokens).toBe(Math.ceil(prompt.length / 4))
  })

  it('runs a tool round trip: the call streams, the client runs it, and the result comes back as a function_call_output item', async () => {
    const seen: unknown[] = []
    const r = streamText({
      model: model(),
      prompt: '!say reading\n!call read_file {"path":"notes.txt"}',
      tools: {
        read_file: tool({
          inputSchema: z.object({ path: z.string() }),
          execute: async (args) => (seen.push(args), 'alpha\nbeta'),
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    })
    expect(await r.text).toBe('read_file ok: alpha')
    expect(seen).toEqual([{ path: 'notes.txt' }])
    const steps = await r.steps
    expect(steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop'])
    expect(steps[0]!.toolCalls.map((c) => [c.toolName, c.toolCallId, c.input])).toEqual([
      ['read_file', 'call_1_1', { path: 'notes.txt' }],
    ])
    const second = double.requests.at(-1)!.body as ResponsesRequest
    expect(second.messages.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', tool_call_id: 'call_1_1', content: expect.stringContaining('alpha') },
    ])
  })

  it('answers at once when not streaming: text, reasoning and function calls', async () => {
    const r = await generateText({
      model: model(),
      prompt: '!think hm\n!say done\n!call Read {"path":"x"}',
      tools: { Read: tool({ inputSchema: z.object({ path: z.string() }) }) },
      maxRetries: 0,
    })
    expect(r.text).toBe('done')
    expect(r.reasoningText).toBe('hm')
    expect(r.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['Read', { path: 'x' }]])
    expect(r.finishReason).toBe('tool-calls')
    expect((double.requests.at(-1)!.body as ResponsesRequest).stream).toBe(false)
  })

  it('!fail before output is an HTTP error the client sees with its status (400, 500, 429 with retry-after)', async () => {
    for (const [script, status] of [
      ['!fail 400 bad input', 400],
      ['!fail boom', 500],
      ['!sleep 5\n!fail 429 slow down', 429],
    ] as const) {
      const err = await generateText({ model: model(), prompt: script, maxRetries: 0 }).catch((e: unknown) => e)
      expect(APICallError.isInstance(err)).toBe(true)
      expect((err as APICallError).statusCode).toBe(status)
      if (status === 429) expect((err as APICallError).responseHeaders?.['retry-after']).toBe('1')
    }
  })

  it('!fail after output is response.failed: the text so far arrives, then the stream reports the error', async () => {
    const errors: unknown[] = []
    const r = streamText({
      model: model(),
      prompt: '!say partial\n!fail later',
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    })
    expect(await r.text).toBe('partial')
    expect(errors).toHaveLength(1)
    expect(String((errors[0] as Error).message)).toContain('later')
  })
})

describe('the Responses wire as Codex reads it', () => {
  it('streams named events with increasing sequence numbers, items framed by added/done, and no [DONE]', async () => {
    const res = await post({
      model: DOUBLE_MODEL,
      stream: true,
      input: user('!think a b\n!say hi there\n!call shell_command {"command":"echo hi"}'),
    })
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const all = await events(res)
    expect(all.every((e) => e.event === e.data.type)).toBe(true)
    expect(all.map((e) => e.data.sequence_number)).toEqual(all.map((_, i) => i))
    const types = all.map((e) => e.data.type)
    expect(types.filter((t) => !t.endsWith('.delta'))).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    const deltas = (type: string) => all.filter((e) => e.data.type === type).map((e) => e.data.delta as string)
    expect(deltas('response.reasoning_summary_text.delta')).toEqual(['a', ' b'])
    expect(deltas('response.output_text.delta')).toEqual(['hi', ' there'])
    expect(deltas('response.function_call_arguments.delta').length).toBeGreaterThan(1)
    expect(deltas('response.function_call_arguments.delta').join('')).toBe('{"command":"echo hi"}')
    const done = all.filter((e) => e.data.type === 'response.output_item.done').map((e) => e.data.item)
    expect(done).toEqual([
      {
        id: expect.stringMatching(/^rs_\d+_0$/),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'a b' }],
        encrypted_content: null,
      },
      {
        id: expect.stringMatching(/^msg_\d+_1$/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'hi there', annotations: [], logprobs: [] }],
      },
      {
        id: expect.stringMatching(/^fc_\d+_1$/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_1_1',
        name: 'shell_command',
        arguments: '{"command":"echo hi"}',
      },
    ])
    const completed = all.at(-1)!.data.response as {
      id: string
      status: string
      output: unknown[]
      usage: { input_tokens: number; output_tokens: number; total_tokens: number }
    }
    expect(completed).toMatchObject({
      id: expect.stringMatching(/^resp_double_\d+$/),
      status: 'completed',
      output: done,
    })
    expect(completed.usage.total_tokens).toBe(completed.usage.input_tokens + completed.usage.output_tokens)
  })

  it('reads tool results from function_call_output items (string or parts; "Error: " marks a failure) and replies one line per call', async () => {
    const input = [
      ...user('!call shell_command {"command":"a"}\n!call apply_patch {"input":"x"}'),
      { type: 'function_call', call_id: 'c1', name: 'shell_command', arguments: '{"command":"a"}' },
      { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: 'x' },
      { type: 'reasoning', id: 'rs_0', summary: [] },
      {
        type: 'function_call_output',
        call_id: 'c1',
        output: [{ type: 'input_text', text: 'Exit code: 0\nOutput:\nhi' }],
      },
      { type: 'custom_tool_call_output', call_id: 'c2', output: 'Error: patch rejected' },
    ]
    const all = await events(await post({ model: DOUBLE_MODEL, stream: true, input }))
    expect(
      all
        .filter((e) => e.data.type === 'response.output_text.delta')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('shell_command ok: Exit code: 0\napply_patch error: patch rejected')
  })

  it('a call to a tool the client declared custom is a custom_tool_call carrying the input argument', async () => {
    const tools = [{ type: 'custom', name: 'apply_patch', description: 'patch' }]
    const all = await events(
      await post({
        model: DOUBLE_MODEL,
        stream: true,
        tools,
        input: user('!call apply_patch {"input":"*** Begin Patch\\n*** End Patch\\n"}'),
      }),
    )
    expect(
      all
        .filter((e) => e.data.type === 'response.custom_tool_call_input.delta')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('*** Begin Patch\n*** End Patch\n')
    const done = all.find((e) => e.data.type === 'response.output_item.done')!.data.item
    expect(done).toEqual({
      id: expect.stringMatching(/^ctc_\d+_1$/),
      type: 'custom_tool_call',
      status: 'completed',
      call_id: 'call_1_1',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** End Patch\n',
    })
  })

  it('!fail after output ends the stream with response.failed carrying the error', async () => {
    const all = await events(await post({ model: DOUBLE_MODEL, stream: true, input: '!say partial\n!fail later' }))
    const last = all.at(-1)!.data
    expect(last).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'server_error', message: 'later' } },
    })
    expect(all.some((e) => e.data.type === 'response.completed')).toBe(false)
  })

  it("refuses bad requests in OpenAI's error shape", async () => {
    const bad = async (body: unknown) => {
      const res = await post(body)
      return [res.status, ((await res.json()) as { error: { message: string; code: string | null } }).error]
    }
    expect(await bad('{nope')).toEqual([
      400,
      expect.objectContaining({ message: 'the request body is not valid JSON' }),
    ])
    expect(await bad({ model: DOUBLE_MODEL })).toEqual([
      400,
      expect.objectContaining({ message: expect.stringContaining("'input' is required") }),
    ])
    expect(await bad({ model: DOUBLE_MODEL, input: [42] })).toEqual([
      400,
      expect.objectContaining({ message: 'input[0] must be an object' }),
    ])
    expect(await bad({ model: DOUBLE_MODEL, input: [{ type: 'function_call_output', output: 'x' }] })).toEqual([
      400,
      expect.objectContaining({ message: 'input[0].call_id must be a non-empty string' }),
    ])
    expect(await bad({ model: DOUBLE_MODEL, input: 'hi', previous_response_id: 'resp_1' })).toEqual([
      400,
      expect.objectContaining({ message: expect.stringContaining('previous_response_id') }),
    ])
    expect(await bad({ model: 'gpt-5', input: 'hi' })).toEqual([
      404,
      expect.objectContaining({ code: 'model_not_found' }),
    ])
    expect(await bad({ model: DOUBLE_MODEL, input: '!call Read {oops}' })).toEqual([
      400,
      expect.objectContaining({ message: expect.stringContaining('not valid JSON') }),
    ])
    const noKey = await fetch(`${double.url}/responses`, {
      method: 'POST',
      body: JSON.stringify({ model: DOUBLE_MODEL, input: 'hi' }),
    })
    expect(noKey.status).toBe(401)
    await noKey.text()
  })
})
