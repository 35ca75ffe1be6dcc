/**
 * Our conversation history (common.yaml ChatMessage) as the AI SDK's ModelMessages, plus the
 * tool definitions as an AI SDK ToolSet without `execute` (the loop runs tools, not the SDK).
 *
 * - system messages (compaction summaries) become the `system` option: providers take system
 *   text apart from the turns, and the SDK warns about system messages inside the history;
 * - an assistant message becomes reasoning parts, then its text, then its tool calls;
 *   which reasoning blocks go back depends on the provider (`ReasoningReplay`);
 * - consecutive tool messages become one tool message; an error result is `error-text`,
 *   prefixed `Error: ` so models on wires without an error flag (OpenAI) can tell, too;
 * - the history a provider sees is kept well-formed: a result whose call is not in the
 *   preceding assistant message is dropped, and a call without a result gets an error result.
 */
import { jsonSchema, tool, type AssistantContent, type ModelMessage, type ToolContent, type ToolSet } from 'ai'
import type { ChatMessage } from '../../generated/schemas.gen.ts'
import type { ToolSchema } from './types.ts'

/**
 * Which reasoning blocks go back to the model: `signed` — only blocks with a signature, as
 * Anthropic thinking blocks (Anthropic rejects unsigned ones); `all` — every block (OpenAI-
 * compatible servers get it back as `reasoning_content`); `none` — never (OpenAI's Responses
 * API accepts only its own reasoning items, which we do not keep).
 */
export type ReasoningReplay = 'signed' | 'all' | 'none'

export const ERROR_PREFIX = 'Error: '

export interface Prompt {
  system: string | undefined
  messages: ModelMessage[]
}

export function toModelMessages(history: readonly ChatMessage[], replay: ReasoningReplay): Prompt {
  const system: string[] = []
  const messages: ModelMessage[] = []
  /** Calls of the latest assistant message still waiting for a result (id → tool). */
  let waiting = new Map<string, string>()
  let results: ToolContent | undefined

  const closeResults = (): void => {
    // Every call of the assistant message gets a result, in call order of arrival.
    for (const [id, name] of waiting)
      (results ??= []).push({
        type: 'tool-result',
        toolCallId: id,
        toolName: name,
        output: { type: 'error-text', value: `${ERROR_PREFIX}no result was recorded for this call` },
      })
    waiting = new Map()
    if (results) messages.push({ role: 'tool', content: results })
    results = undefined
  }

  for (const m of history) {
    if (m.role === 'tool') {
      const r = m.tool_result
      if (!r || !waiting.has(r.call_id)) continue
      waiting.delete(r.call_id)
      const output = r.ok
        ? { type: 'text' as const, value: r.output ?? m.content }
        : { type: 'error-text' as const, value: `${ERROR_PREFIX}${r.error ?? m.content}` }
      ;(results ??= []).push({ type: 'tool-result', toolCallId: r.call_id, toolName: r.tool, output })
      continue
    }
    closeResults()
    if (m.role === 'system') {
      if (m.content) system.push(m.content)
    } else if (m.role === 'user') {
      messages.push({ role: 'user', content: m.content })
    } else {
      const content: Exclude<AssistantContent, string> = []
      for (const block of m.reasoning ?? []) {
        if (replay === 'all' && block.text) content.push({ type: 'reasoning', text: block.text })
        else if (replay === 'signed' && block.signature)
          content.push({
            type: 'reasoning',
            text: block.text,
            providerOptions: { anthropic: { signature: block.signature } },
          })
      }
      if (m.content) content.push({ type: 'text', text: m.content })
      for (const c of m.tool_calls ?? []) {
        content.push({ type: 'tool-call', toolCallId: c.call_id, toolName: c.tool, input: c.args })
        waiting.set(c.call_id, c.tool)
      }
      if (content.length) messages.push({ role: 'assistant', content })
    }
  }
  closeResults()
  return { system: system.length ? system.join('\n\n') : undefined, messages }
}

/** The tools offered to the model, as a ToolSet the SDK validates calls against (by JSON Schema). */
export function toToolSet(tools: readonly ToolSchema[]): ToolSet | undefined {
  if (tools.length === 0) return undefined
  const set: ToolSet = {}
  for (const t of tools)
    set[t.name] = tool({
      description: t.description,
      inputSchema: jsonSchema(t.input_schema as Parameters<typeof jsonSchema>[0]),
    })
  return set
}
