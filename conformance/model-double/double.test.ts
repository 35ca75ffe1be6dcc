/**
 * The model double on the wire, as another implementation's OpenAI client sees it over a
 * real socket: `GET /v1/models`, streamed chat completions (SSE chunks, deltas for text,
 * `reasoning_content` and tool calls with split arguments, the finish chunk, usage only when
 * asked, `[DONE]`), non-streamed completions, `!fail` before and after the first byte,
 * `!sleep` ended by a client that goes away, and the error answers (400, 401, 404, 405, 413).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createParser } from 'eventsource-parser'
import { DOUBLE_MODEL, startModelDouble, type ModelDouble } from './server.ts'

let double: ModelDouble
let keyed: ModelDouble
beforeAll(async () => {
  double = await startModelDouble()
  keyed = await startModelDouble({ apiKey: 'double-key' })
})
afterAll(async () => {
  await double.close()
  await keyed.close()
})

const post = (body: unknown, init: RequestInit = {}, base = double.url) =>
  fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  })

interface Chunk {
  object?: string
  choices: {
    delta: {
      role?: string
      content?: string
      reasoning_content?: string
      tool_calls?: { index: number; id?: string; type?: string; function: { name?: string; arguments?: string } }[]
    }
    finish_reason: string | null
  }[]
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number }
  error?: { message: string }
}

/** The `data:` payloads of an SSE response, in order (`[DONE]` kept as a string). */
async function dataOf(res: Response): Promise<(Chunk | '[DONE]')[]> {
  const out: (Chunk | '[DONE]')[] = []
  const parser = createParser({
    onEvent: (e) => out.push(e.data === '[DONE]' ? '[DONE]' : (JSON.parse(e.data) as Chunk)),
  })
  parser.feed(await res.text())
  return out
}

const chunks = (all: (Chunk | '[DONE]')[]): Chunk[] => all.filter((c): c is Chunk => c !== '[DONE]')
const say = (content: string, extra: Record<string, unknown> = {}) => ({
  model: DOUBLE_MODEL,
  stream: true,
  messages: [{ role: 'user', content }],
  ...extra,
})

describe('the model double', () => {
  it('lists its models', async () => {
    const res = await fetch(`${double.url}/models`)
    expect(await res.json()).toEqual({
      object: 'list',
      data: [{ id: DOUBLE_MODEL, object: 'model', created: 0, owned_by: 'chimera' }],
    })
  })

  it('streams !think as reasoning_content and !say as content deltas in word-sized chunks, then finish and [DONE]', async () => {
    const res = await post(say('!think a b\n!say hello big world'))
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const all = await dataOf(res)
    expect(all.at(-1)).toBe('[DONE]')
    const cs = chunks(all)
    expect(cs.every((c) => c.object === 'chat.completion.chunk')).toBe(true)
    expect(cs[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' })
    expect(cs.map((c) => c.choices[0]?.delta.reasoning_content).filter(Boolean)).toEqual(['a', ' b'])
    expect(cs.map((c) => c.choices[0]?.delta.content).filter(Boolean)).toEqual(['hello', ' big', ' world'])
    expect(cs.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' })
    expect(cs.some((c) => c.usage)).toBe(false) // not asked for
  })

  it('streams !call lines as tool_calls deltas with the arguments split across chunks, and usage when asked', async () => {
    const all = chunks(
      await dataOf(
        await post(
          say('!say reading\n!call Read {"path":"README.md"}\n!call Glob {"pattern":"**/*.ts"}', {
            stream_options: { include_usage: true },
          }),
        ),
      ),
    )
    const calls = all.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
    expect(calls.filter((c) => c.id).map((c) => [c.index, c.id, c.type, c.function.name])).toEqual([
      [0, 'call_1_1', 'function', 'Read'],
      [1, 'call_1_2', 'function', 'Glob'],
    ])
    const args = (i: number) => calls.filter((c) => c.index === i).map((c) => c.function.arguments ?? '')
    expect(args(0).length).toBeGreaterThan(2)
    expect(args(0).join('')).toBe('{"path":"README.md"}')
    expect(args(1).join('')).toBe('{"pattern":"**/*.ts"}')
    const finish = all.find((c) => c.choices[0]?.finish_reason)
    expect(finish!.choices[0]!.finish_reason).toBe('tool_calls')
    const last = all.at(-1)!
    expect(last.choices).toEqual([])
    const written =
      'reading'.length + 'Read'.length + '{"path":"README.md"}'.length + 'Glob'.length + '{"pattern":"**/*.ts"}'.length
    expect(last.usage).toEqual({
      prompt_tokens: Math.ceil(
        '!say reading\n!call Read {"path":"README.md"}\n!call Glob {"pattern":"**/*.ts"}'.length / 4,
      ),
      completion_tokens: Math.ceil(written / 4),
      total_tokens: expect.any(Number),
    })
  })

  it('after tool results it replies one line per call (errors are results starting "Error: "), as the offline model does', async () => {
    const messages = [
      { role: 'user', content: '!call Read {"path":"a"}\n!call Read {"path":"b"}' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'x1', type: 'function', function: { name: 'Read', arguments: '{"path":"a"}' } },
          { id: 'x2', type: 'function', function: { name: 'Bash', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'x1', content: 'alpha\nbeta' },
      { role: 'tool', tool_call_id: 'x2', content: 'Error: exit code 2' },
    ]
    const all = chunks(await dataOf(await post({ model: DOUBLE_MODEL, stream: true, messages })))
    expect(all.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Read ok: alpha\nBash error: exit code 2')
  })

  it('answers at once when not streaming: content, reasoning_content, tool_calls and usage', async () => {
    const res = await post({
      model: DOUBLE_MODEL,
      messages: [{ role: 'user', content: [{ type: 'text', text: '!think hm\n!say done\n!call Read {"path":"x"}' }] }],
    })
    expect(await res.json()).toMatchObject({
      object: 'chat.completion',
      model: DOUBLE_MODEL,
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'done',
            reasoning_content: 'hm',
            tool_calls: [{ id: 'call_1_1', type: 'function', function: { name: 'Read', arguments: '{"path":"x"}' } }],
          },
        },
      ],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) },
    })
  })

  it('!fail before any output is an HTTP error (500, or the status it starts with; 429 carries retry-after)', async () => {
    const r500 = await post(say('!fail boom'))
    expect([r500.status, await r500.json()]).toEqual([
      500,
      { error: { message: 'boom', type: 'server_error', param: null, code: null } },
    ])
    const r429 = await post(say('!sleep 5\n!fail 429 slow down'))
    expect([r429.status, r429.headers.get('retry-after')]).toEqual([429, '1'])
    expect(await r429.json()).toMatchObject({ error: { message: '429 slow down' } })
  })

  it('!fail after output is an error event that ends the stream (no finish, no [DONE])', async () => {
    const all = await dataOf(await post(say('!say partial\n!fail later')))
    expect(all.at(-1)).toEqual({ error: { message: 'later', type: 'server_error', param: null, code: null } })
    expect(all.includes('[DONE]')).toBe(false)
    expect(chunks(all).some((c) => c.choices?.[0]?.finish_reason)).toBe(false)
  })

  it('!sleep ends when the client goes away; the double keeps serving', async () => {
    const ctl = new AbortController()
    const pending = post(say('!say first\n!sleep 60000\n!say never'), { signal: ctl.signal })
    const res = await pending
    const reader = res.body!.getReader()
    await reader.read() // the first bytes are out: the double is in its sleep soon after
    ctl.abort()
    await expect(reader.read()).rejects.toThrow()
    const next = chunks(await dataOf(await post(say('!say still here'))))
    expect(next.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('still here')
  })

  it("answers bad requests in OpenAI's error shape", async () => {
    const bad = async (res: Response) => [
      res.status,
      ((await res.json()) as { error: { message: string; code: string | null } }).error,
    ]
    expect(await bad(await post('{not json'))).toEqual([
      400,
      expect.objectContaining({ message: 'the request body is not valid JSON' }),
    ])
    expect(await bad(await post({ model: DOUBLE_MODEL }))).toEqual([
      400,
      expect.objectContaining({ message: "'messages' must be an array of messages with a 'role'" }),
    ])
    expect(await bad(await post({ model: 'gpt-4o', messages: [] }))).toEqual([
      404,
      expect.objectContaining({ code: 'model_not_found' }),
    ])
    expect(await bad(await post(say('!call Read {oops}')))).toEqual([
      400,
      expect.objectContaining({ message: expect.stringContaining('not valid JSON') }),
    ])
    expect(await bad(await fetch(`${double.url}/chat/completions`))).toEqual([405, expect.anything()])
    expect(await bad(await fetch(`${double.url}/embeddings`, { method: 'POST' }))).toEqual([
      404,
      expect.objectContaining({ code: 'not_found' }),
    ])
    expect(await bad(await post(say('x'.repeat(5 * 1024 * 1024))))).toEqual([413, expect.anything()])
  })

  it('started with a key, it refuses requests without it (401)', async () => {
    const none = await post(say('!say hi'), {}, keyed.url)
    expect(none.status).toBe(401)
    expect(await none.json()).toMatchObject({ error: { code: 'invalid_api_key' } })
    const ok = await post(
      say('!say hi'),
      { headers: { 'content-type': 'application/json', authorization: 'Bearer double-key' } },
      keyed.url,
    )
    expect(ok.status).toBe(200)
    await ok.text()
  })
})
