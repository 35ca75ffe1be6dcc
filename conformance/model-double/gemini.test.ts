/**
 * The model double's Gemini wire, driven over a real socket by Google's official SDK
 * (`@google/genai`, Gemini API mode with `httpOptions.baseUrl` at the double): streamed thought
 * and text parts (`streamGenerateContent?alt=sse`), a function-call round trip (the
 * `functionCall` part, the result sent back as a `functionResponse` part, an error result),
 * non-streamed answers, countTokens, the model list, both ways of sending the key, and errors as
 * the SDK's `ApiError` (before output, mid-stream, bad key, unknown model, bad request).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ApiError, GoogleGenAI, type Content } from '@google/genai'
import { DOUBLE_MODEL, startModelDouble, type ModelDouble } from './server.ts'

const KEY = 'gemini-double-key'
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

const ai = (apiKey = KEY) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: double.origin } })
const TOOLS = [
  {
    functionDeclarations: [
      {
        name: 'read_file',
        description: 'read a file',
        parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } } },
      },
    ],
  },
]

async function collect(
  stream: AsyncGenerator<{
    candidates?: { content?: Content; finishReason?: string }[]
    usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number }
  }>,
) {
  const parts: NonNullable<Content['parts']> = []
  let finish: string | undefined
  let usage: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined
  for await (const chunk of stream) {
    parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
    finish = chunk.candidates?.[0]?.finishReason ?? finish
    usage = chunk.usageMetadata ?? usage
  }
  const text = (thought: boolean) =>
    parts
      .filter((p) => typeof p.text === 'string' && (p.thought === true) === thought)
      .map((p) => p.text)
      .join('')
  return {
    parts,
    finish,
    usage,
    text: text(false),
    thoughts: text(true),
    calls: parts.filter((p) => p.functionCall).map((p) => p.functionCall),
  }
}

describe('the model double on the Gemini API, driven by @google/genai', () => {
  it('streams !think as thought parts and !say as text parts, ending with STOP and usage', async () => {
    const prompt = '!think weighing it\n!say hello gemini world'
    const r = await collect(
      await ai().models.generateContentStream({
        model: DOUBLE_MODEL,
        contents: prompt,
        config: { thinkingConfig: { includeThoughts: true } },
      }),
    )
    expect(r.text).toBe('hello gemini world')
    expect(r.thoughts).toBe('weighing it')
    expect(r.parts.filter((p) => p.text && !p.thought).length).toBeGreaterThan(1)
    expect(r.finish).toBe('STOP')
    expect(r.usage).toMatchObject({
      promptTokenCount: Math.ceil(prompt.length / 4),
      candidatesTokenCount: Math.ceil(('weighing it'.length + 'hello gemini world'.length) / 4),
    })
  })

  it('runs a function-call round trip: functionCall part out, functionResponse part back', async () => {
    const prompt: Content = {
      role: 'user',
      parts: [{ text: 'context first' }, { text: '!say reading\n!call read_file {"path":"notes.txt"}' }],
    }
    const first = await collect(
      await ai().models.generateContentStream({ model: DOUBLE_MODEL, contents: [prompt], config: { tools: TOOLS } }),
    )
    expect(first.text).toBe('reading')
    expect(first.calls).toEqual([{ name: 'read_file', args: { path: 'notes.txt' } }])
    const model: Content = { role: 'model', parts: first.parts }
    const answer = (response: Record<string, unknown>): Content[] => [
      prompt,
      model,
      { role: 'user', parts: [{ functionResponse: { id: 'read_file-1', name: 'read_file', response } }] },
    ]
    const ok = await collect(
      await ai().models.generateContentStream({
        model: DOUBLE_MODEL,
        contents: answer({ output: 'alpha\nbeta' }),
        config: { tools: TOOLS },
      }),
    )
    expect(ok.text).toBe('read_file ok: alpha')
    expect(ok.calls).toEqual([])
    const failed = await ai().models.generateContent({
      model: DOUBLE_MODEL,
      contents: answer({ error: 'no such file' }),
      config: { tools: TOOLS },
    })
    expect(failed.text).toBe('read_file error: no such file')
  })

  it('reads a prompt sent beside a function response (after a cancel) as the prompt', async () => {
    const contents: Content[] = [
      { role: 'user', parts: [{ text: '!call write_file {"file_path":"a"}' }] },
      { role: 'model', parts: [{ functionCall: { name: 'write_file', args: { file_path: 'a' } } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'write_file', response: { error: 'cancelled' } } },
          { text: '!say after cancel' },
        ],
      },
    ]
    expect((await ai().models.generateContent({ model: DOUBLE_MODEL, contents })).text).toBe('after cancel')
    contents[2]!.parts!.pop()
    expect((await ai().models.generateContent({ model: DOUBLE_MODEL, contents })).text).toBe(
      'write_file error: cancelled',
    )
  })

  it('answers at once when not streaming: thought, text and function calls', async () => {
    const r = await ai().models.generateContent({
      model: DOUBLE_MODEL,
      contents: '!think hm\n!say done\n!call read_file {"path":"x"}',
      config: { tools: TOOLS },
    })
    expect(r.text).toBe('done')
    expect(r.functionCalls).toEqual([{ name: 'read_file', args: { path: 'x' } }])
    expect(r.candidates?.[0]?.content?.parts?.[0]).toEqual({ text: 'hm', thought: true })
    expect(r.candidates?.[0]?.finishReason).toBe('STOP')
  })

  it('counts tokens, lists its models, and takes the key as ?key= too', async () => {
    expect((await ai().models.countTokens({ model: DOUBLE_MODEL, contents: '!say twelve chars' })).totalTokens).toBe(
      Math.ceil('!say twelve chars'.length / 4),
    )
    const names: string[] = []
    for await (const m of await ai().models.list()) names.push(m.name ?? '')
    expect(names).toEqual([`models/${DOUBLE_MODEL}`])
    const res = await fetch(`${double.origin}/v1beta/models/${DOUBLE_MODEL}:generateContent?key=${KEY}`, {
      method: 'POST',
      body: JSON.stringify({ contents: [{ parts: [{ text: '!say by query key' }] }] }),
    })
    expect(((await res.json()) as { candidates: { content: Content }[] }).candidates[0]!.content.parts).toEqual([
      { text: 'by query key' },
    ])
  })

  it("maps failures to ApiError with Google's error shape", async () => {
    const fail = async (p: Promise<unknown>) => (await p.catch((e: unknown) => e)) as ApiError
    const rate = await fail(ai().models.generateContent({ model: DOUBLE_MODEL, contents: '!fail 429 slow down' }))
    expect(rate).toBeInstanceOf(ApiError)
    expect(rate.status).toBe(429)
    expect(JSON.parse(rate.message)).toEqual({
      error: { code: 429, message: '429 slow down', status: 'RESOURCE_EXHAUSTED' },
    })
    expect((await fail(ai('wrong').models.generateContent({ model: DOUBLE_MODEL, contents: 'hi' }))).status).toBe(400)
    expect((await fail(ai().models.generateContent({ model: 'no-such-model', contents: 'hi' }))).status).toBe(404)
    expect(
      (await fail(ai().models.generateContent({ model: DOUBLE_MODEL, contents: '!call read_file {not json' }))).status,
    ).toBe(400)
    const before = await fail(ai().models.generateContentStream({ model: DOUBLE_MODEL, contents: '!fail 503 down' }))
    expect(before.status).toBe(503)
  })

  it('ends a stream that fails after output with an error the SDK raises', async () => {
    const stream = await ai().models.generateContentStream({
      model: DOUBLE_MODEL,
      contents: '!say partial\n!fail later',
    })
    const texts: string[] = []
    const err = await (async () => {
      for await (const chunk of stream) texts.push(chunk.text ?? '')
    })().catch((e: unknown) => e)
    expect(texts.join('')).toBe('partial')
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).status).toBe(500)
  })
})
