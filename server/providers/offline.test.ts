/** The offline model, one test per directive (docs/providers.md table) plus its playing rules. */
import { describe, expect, it } from 'vitest'
import type { ChatMessage } from '../../generated/schemas.gen.ts'
import { OfflineProvider, parseDirectives, wordChunks } from './offline.ts'
import { ProviderError, type ProviderEvent } from './types.ts'

const model = new OfflineProvider()
async function play(messages: ChatMessage[], signal = new AbortController().signal): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = []
  for await (const e of model.stream({ model: 'offline', messages, tools: [], signal })) out.push(e)
  return out
}
const user = (content: string): ChatMessage => ({ role: 'user', content })
const text = (evs: ProviderEvent[], type: 'text' | 'reasoning' = 'text') =>
  evs
    .filter((e) => e.type === type)
    .map((e) => (e as { text: string }).text)
    .join('')

describe('offline model directives', () => {
  it('`!call <Tool> <json>` issues that tool call with those arguments', async () => {
    const evs = await play([user('!call Read {"path":"a.txt"}')])
    expect(evs.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', call: { call_id: 'call_1_1', tool: 'Read', args: { path: 'a.txt' } } },
    ])
  })

  it('all `!call` lines of one message form one step, in order, after the other lines', async () => {
    const evs = await play([user('!call Read {"path":"a"}\n!say reading\n!call Glob {"pattern":"*"}')])
    expect(evs.map((e) => e.type)).toEqual([
      'text',
      'tool_input_start',
      'tool_input_delta',
      'tool_call',
      'tool_input_start',
      'tool_input_delta',
      'tool_call',
      'usage',
      'finish',
    ])
    expect(evs.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
    expect(evs.filter((e) => e.type === 'tool_call').map((e) => (e as { call: { tool: string } }).call.tool)).toEqual([
      'Read',
      'Glob',
    ])
  })

  it('`!say <text>` replies with exactly <text>, streamed in word-sized chunks', async () => {
    const evs = await play([user('!say Hello there,  world!')])
    expect(text(evs)).toBe('Hello there,  world!')
    expect(evs.filter((e) => e.type === 'text').length).toBe(3)
  })

  it('`!think <text>` emits <text> as reasoning, not as reply text', async () => {
    const evs = await play([user('!think let me see\n!say done')])
    expect(text(evs, 'reasoning')).toBe('let me see')
    expect(text(evs)).toBe('done')
  })

  it('`!sleep <ms>` waits that long before going on', async () => {
    const t0 = Date.now()
    const evs = await play([user('!sleep 120\n!say after')])
    expect(Date.now() - t0).toBeGreaterThanOrEqual(110)
    expect(text(evs)).toBe('after')
  })

  it('`!sleep` is cancellable: aborting the signal ends the wait with the abort reason', async () => {
    const ctl = new AbortController()
    setTimeout(() => ctl.abort(new Error('stop')), 30)
    await expect(play([user('!sleep 10000\n!say never')], ctl.signal)).rejects.toThrow('stop')
  })

  it('`!fail <message>` fails the step at that point with that message', async () => {
    const seen: ProviderEvent[] = []
    const run = async () => {
      for await (const e of model.stream({
        model: 'offline',
        messages: [user('!say before\n!fail boom\n!say after')],
        tools: [],
        signal: new AbortController().signal,
      }))
        seen.push(e)
    }
    await expect(run()).rejects.toThrow(new ProviderError('boom'))
    expect(text(seen)).toBe('before')
  })

  it('no directive: the fixed reply quoting the message', async () => {
    const evs = await play([user('hello model')])
    expect(text(evs)).toBe('offline model: no provider is configured. You said: hello model')
  })

  it('other lines are ignored when the message holds a directive', async () => {
    expect(text(await play([user('please\n!say only this\nthanks')]))).toBe('only this')
  })

  it('several `!say` lines are joined by newlines', async () => {
    expect(text(await play([user('!say one\n!say two')]))).toBe('one\ntwo')
  })

  it('after tool results, the next step replies one line per call in call order, then ends', async () => {
    const messages: ChatMessage[] = [
      user('!call Read {"path":"a"}\n!call Bash {"command":"x"}'),
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { call_id: 'c1', tool: 'Read', args: { path: 'a' } },
          { call_id: 'c2', tool: 'Bash', args: { command: 'x' } },
        ],
      },
      {
        role: 'tool',
        content: 'line one\nline two',
        tool_result: { call_id: 'c1', tool: 'Read', ok: true, output: 'line one\nline two' },
      },
      {
        role: 'tool',
        content: 'exit 1',
        tool_result: { call_id: 'c2', tool: 'Bash', ok: false, error: 'exit code 1' },
      },
    ]
    const evs = await play(messages)
    expect(text(evs)).toBe('Read ok: line one\nBash error: exit code 1')
    expect(evs.some((e) => e.type === 'tool_call')).toBe(false)
  })

  it('usage counts characters read and written / 4, rounded up, and costs 0', async () => {
    const evs = await play([user('!say abcde')])
    expect(evs.at(-2)).toEqual({
      type: 'usage',
      input_tokens: Math.ceil('!say abcde'.length / 4),
      output_tokens: Math.ceil(5 / 4),
      cost_usd: 0,
    })
    expect(evs.at(-1)).toEqual({ type: 'finish', reason: 'end_turn' })
  })

  it('malformed directives are provider errors naming the problem', () => {
    expect(() => parseDirectives('!call Read {not json}')).toThrow(/not valid JSON/)
    expect(() => parseDirectives('!call Read [1]')).toThrow(/JSON object/)
    expect(() => parseDirectives('!sleep soon')).toThrow(/milliseconds/)
  })

  it('wordChunks concatenate back to the text exactly', () => {
    for (const t of ['', 'a', ' lead', 'trail ', 'a  b\tc\nd', '  ']) expect(wordChunks(t).join('')).toBe(t)
  })

  it('the model id is offline', () => {
    expect(model.models()).toEqual(['offline'])
  })
})
