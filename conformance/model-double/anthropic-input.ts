/**
 * Reading an Anthropic Messages request (`POST /v1/messages`, `…/count_tokens`) as the chat
 * messages the double's play rules read (play.ts). `system` (the top-level field, or a message
 * with role `system` among the turns, as Claude Code sends its environment) is not played. A message's content
 * is a string or a list of blocks:
 *
 * - `text` blocks are the message's text: a user message stands for its last block that holds a
 *   directive (play.ts `promptOf`: Claude Code sends reminders, and a failed turn's prompt again,
 *   beside the new prompt), else for all blocks joined by newlines;
 * - an assistant's `tool_use` blocks are its calls (`id`, `name`, `input`);
 * - a user message's `tool_result` blocks are results (`tool_use_id`, `content` a string or text
 *   blocks, `is_error`); text blocks beside them are a new prompt only when they hold a
 *   directive (play.ts `resultsAndPrompt`: notes are not, a prompt sent after a cancel is);
 * - `thinking`, `redacted_thinking`, `image`, `document` and other blocks carry nothing the
 *   double plays and are skipped.
 */
import { promptOf, resultsAndPrompt, type WireMessage } from './play.ts'
import { badRequest, parseObject } from './wire.ts'

export interface MessagesRequest {
  model: string
  stream: boolean
  messages: WireMessage[]
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function blocksOf(content: unknown, at: string): Record<string, unknown>[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) throw badRequest(`${at}.content: must be a string or an array of content blocks`)
  return content.map((b, j) => {
    if (!isObject(b) || typeof b.type !== 'string')
      throw badRequest(`${at}.content.${j}: a content block needs a 'type'`)
    return b
  })
}

const textsOf = (blocks: readonly Record<string, unknown>[]): string[] =>
  blocks.filter((b) => b.type === 'text' && typeof b.text === 'string').map((b) => b.text as string)
const textOfBlocks = (blocks: readonly Record<string, unknown>[]): string => textsOf(blocks).join('\n')

function readMessage(m: unknown, i: number): WireMessage[] {
  const at = `messages.${i}`
  if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system'))
    throw badRequest(`${at}.role: must be "user", "assistant" or "system"`)
  const blocks = blocksOf(m.content, at)
  if (m.role === 'system') return []
  if (m.role === 'assistant') {
    const calls = blocks
      .filter((b) => b.type === 'tool_use')
      .map((b, j) => {
        if (typeof b.id !== 'string' || typeof b.name !== 'string')
          throw badRequest(`${at}.content.${j}: tool_use needs 'id' and 'name'`)
        return { id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }
      })
    return [{ role: 'assistant', content: textOfBlocks(blocks), ...(calls.length ? { tool_calls: calls } : {}) }]
  }
  const results = blocks.filter((b) => b.type === 'tool_result')
  if (results.length === 0) return [{ role: 'user', content: promptOf(textsOf(blocks)) }]
  const read = results.map((b, j): WireMessage => {
    if (typeof b.tool_use_id !== 'string') throw badRequest(`${at}.content.${j}.tool_use_id: must be a string`)
    const content = b.content === undefined ? '' : textOfBlocks(blocksOf(b.content, `${at}.content.${j}`))
    return { role: 'tool', tool_call_id: b.tool_use_id, content, isError: b.is_error === true }
  })
  return resultsAndPrompt(read, textsOf(blocks))
}

export function parseMessagesRequest(text: string, counting = false): MessagesRequest {
  const b = parseObject(text)
  if (typeof b.model !== 'string') throw badRequest('model: Field required')
  if (!counting && typeof b.max_tokens !== 'number') throw badRequest('max_tokens: Field required')
  if (!Array.isArray(b.messages)) throw badRequest('messages: Field required')
  if (b.stream !== undefined && typeof b.stream !== 'boolean')
    throw badRequest('stream: Input should be a valid boolean')
  return { model: b.model, stream: b.stream === true, messages: b.messages.flatMap(readMessage) }
}
