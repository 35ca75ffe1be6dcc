/**
 * Reading a Responses API request (`POST /v1/responses`) as the chat messages the double's
 * play rules read (play.ts): `input` is a string (one user message) or a list of items —
 * messages (`{type: "message"}` or a bare `{role, content}`, content a string or parts with
 * `text`), `function_call` / `custom_tool_call` items (the model's earlier calls, by
 * `call_id`) and `function_call_output` / `custom_tool_call_output` items (their results, the
 * `output` a string or parts with `text`). Other item kinds (reasoning, item references, web
 * search, …) carry nothing the double plays and are skipped. As on the chat wire, a result
 * whose text starts with `Error: ` is an error result.
 */
import type { WireMessage } from './play.ts'
import { badRequest, parseObject } from './wire.ts'

export interface ResponsesRequest {
  model: string
  stream: boolean
  /** The input items as chat messages, in order. */
  messages: WireMessage[]
  /** Names of the tools the client declared as `custom` (freeform input, not JSON arguments). */
  customTools: Set<string>
  /** How many input items the request carried (call ids are derived from it, like the chat wire's). */
  items: number
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A content value's text: a string, or the `text` of every part that has one, joined. */
function textOf(content: unknown, what: string): string {
  if (typeof content === 'string') return content
  if (content === undefined || content === null) return ''
  if (!Array.isArray(content)) throw badRequest(`${what} must be a string or an array of content parts`)
  return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('')
}

function callId(item: Record<string, unknown>, i: number): string {
  if (typeof item.call_id !== 'string' || item.call_id === '')
    throw badRequest(`input[${i}].call_id must be a non-empty string`)
  return item.call_id
}

function itemMessage(item: Record<string, unknown>, i: number): WireMessage | undefined {
  const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined)
  switch (type) {
    case 'message':
      if (typeof item.role !== 'string') throw badRequest(`input[${i}].role must be a string`)
      return { role: item.role, content: textOf(item.content, `input[${i}].content`) }
    case 'function_call':
    case 'custom_tool_call': {
      if (typeof item.name !== 'string') throw badRequest(`input[${i}].name must be a string`)
      const args = type === 'function_call' ? item.arguments : item.input
      return {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: callId(item, i),
            type: 'function',
            function: { name: item.name, arguments: typeof args === 'string' ? args : '' },
          },
        ],
      }
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
      return { role: 'tool', tool_call_id: callId(item, i), content: textOf(item.output, `input[${i}].output`) }
    default:
      if (typeof type !== 'string') throw badRequest(`input[${i}] needs a 'type' (or a 'role' for a message)`)
      return undefined
  }
}

export function parseResponsesRequest(text: string): ResponsesRequest {
  const b = parseObject(text)
  if (typeof b.model !== 'string') throw badRequest("'model' is required and must be a string")
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean')
    throw badRequest("'stream' must be a boolean")
  // The double keeps no responses, so it cannot continue one; saying so beats playing a turn without its history.
  if (b.previous_response_id !== undefined && b.previous_response_id !== null)
    throw badRequest(
      "'previous_response_id' is not supported by the model double: send the whole conversation in 'input'",
    )
  let messages: WireMessage[]
  let items = 1
  if (typeof b.input === 'string') messages = [{ role: 'user', content: b.input }]
  else if (Array.isArray(b.input)) {
    items = b.input.length
    messages = b.input.flatMap((item: unknown, i) => {
      if (!isObject(item)) throw badRequest(`input[${i}] must be an object`)
      const m = itemMessage(item, i)
      return m ? [m] : []
    })
  } else throw badRequest("'input' is required: a string or an array of input items")
  const customTools = new Set<string>()
  if (Array.isArray(b.tools))
    for (const t of b.tools)
      if (isObject(t) && t.type === 'custom' && typeof t.name === 'string') customTools.add(t.name)
  return { model: b.model, stream: b.stream === true, messages, customTools, items }
}
