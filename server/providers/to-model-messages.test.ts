/** Our history as AI SDK messages: the shapes, reasoning replay per provider, well-formedness. */
import { describe, expect, it } from 'vitest'
import type { ChatMessage } from '../../generated/schemas.gen.ts'
import { toModelMessages, toToolSet } from './to-model-messages.ts'

const assistant: ChatMessage = {
  role: 'assistant',
  content: 'on it',
  reasoning: [{ text: 'signed thought', signature: 'sig' }, { text: 'plain thought' }],
  tool_calls: [{ call_id: 'c1', tool: 'Read', args: { path: 'a' } }],
}

describe('toModelMessages', () => {
  it('system messages become the system text; the rest keep their order', () => {
    const p = toModelMessages(
      [
        { role: 'system', content: 'summary one' },
        { role: 'user', content: 'hi' },
        { role: 'system', content: 'summary two' },
      ],
      'none',
    )
    expect(p.system).toBe('summary one\n\nsummary two')
    expect(p.messages).toEqual([{ role: 'user', content: 'hi' }])
  })

  it('reasoning goes back by provider: signed only (Anthropic), all (OpenAI-compatible), none (OpenAI)', () => {
    const reasoningOf = (replay: 'signed' | 'all' | 'none') =>
      (
        toModelMessages(
          [
            { role: 'user', content: 'x' },
            assistant,
            { role: 'tool', content: 'A', tool_result: { call_id: 'c1', tool: 'Read', ok: true, output: 'A' } },
          ],
          replay,
        ).messages[1]!.content as { type: string }[]
      ).filter((c) => c.type === 'reasoning')
    expect(reasoningOf('signed')).toEqual([
      { type: 'reasoning', text: 'signed thought', providerOptions: { anthropic: { signature: 'sig' } } },
    ])
    expect(reasoningOf('all')).toEqual([
      { type: 'reasoning', text: 'signed thought' },
      { type: 'reasoning', text: 'plain thought' },
    ])
    expect(reasoningOf('none')).toEqual([])
  })

  it('consecutive tool results form one tool message; failures are error-text prefixed "Error: "', () => {
    const p = toModelMessages(
      [
        { role: 'user', content: 'x' },
        {
          ...assistant,
          tool_calls: [...assistant.tool_calls!, { call_id: 'c2', tool: 'Bash', args: { command: 'false' } }],
        },
        { role: 'tool', content: 'A', tool_result: { call_id: 'c1', tool: 'Read', ok: true, output: 'A' } },
        { role: 'tool', content: 'exit 1', tool_result: { call_id: 'c2', tool: 'Bash', ok: false, error: 'exit 1' } },
      ],
      'none',
    )
    expect(p.messages[2]).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'Read', output: { type: 'text', value: 'A' } },
        {
          type: 'tool-result',
          toolCallId: 'c2',
          toolName: 'Bash',
          output: { type: 'error-text', value: 'Error: exit 1' },
        },
      ],
    })
  })

  it('keeps the history well-formed: orphan results are dropped, calls without a result get an error result', () => {
    const p = toModelMessages(
      [
        { role: 'tool', content: 'orphan', tool_result: { call_id: 'zz', tool: 'Read', ok: true, output: 'orphan' } },
        { role: 'user', content: 'x' },
        assistant,
        { role: 'user', content: 'steering before any result' },
      ],
      'none',
    )
    expect(p.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user'])
    expect(p.messages[2]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'Read',
          output: { type: 'error-text', value: 'Error: no result was recorded for this call' },
        },
      ],
    })
  })

  it('an assistant message with nothing to send is left out', () => {
    expect(
      toModelMessages(
        [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '', reasoning: [{ text: 'unsigned' }] },
        ],
        'signed',
      ).messages,
    ).toHaveLength(1)
  })
})

describe('toToolSet', () => {
  it('no tools: undefined; tools: a set keyed by name, with their JSON Schema', async () => {
    expect(toToolSet([])).toBeUndefined()
    const set = toToolSet([
      { name: 'Read', description: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
    ])!
    expect(Object.keys(set)).toEqual(['Read'])
    expect(set.Read!.description).toBe('read')
    expect(set.Read!.execute).toBeUndefined()
  })
})
