/**
 * Reading a Gemini `generateContent` / `streamGenerateContent` / `countTokens` request body as
 * the chat messages the double's play rules read (play.ts). `systemInstruction`, `tools` and
 * `generationConfig` are not played. `contents` is a list of `{role, parts}`:
 *
 * - `text` parts (not `thought` ones) are the turn's text: a user turn stands for its last part
 *   that holds a directive (play.ts `promptOf`), else for all parts joined by newlines;
 * - a `model` turn's `functionCall` parts are its calls (`name`, `args`, optional `id`);
 * - a `user` turn's `functionResponse` parts are results (`name`, optional `id`, `response`):
 *   the text is `response.output` when it is a string, `response.error` (an error result) when
 *   present, else the response as JSON; text parts beside them are a new prompt only when they
 *   hold a directive (play.ts `resultsAndPrompt`);
 * - other parts (inline data, files, executable code, thought signatures) are skipped.
 */
import { promptOf, resultsAndPrompt, type WireMessage } from './play.ts'
import { badRequest, parseObject } from './wire.ts'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function partsOf(c: unknown, i: number): Record<string, unknown>[] {
  if (!isObject(c) || !Array.isArray(c.parts)) throw badRequest(`contents[${i}].parts: must be a list of parts`)
  return c.parts.map((p, j) => {
    if (!isObject(p)) throw badRequest(`contents[${i}].parts[${j}]: must be an object`)
    return p
  })
}

const textsOf = (parts: readonly Record<string, unknown>[]): string[] =>
  parts.filter((p) => typeof p.text === 'string' && p.thought !== true).map((p) => p.text as string)

function resultText(response: unknown): { text: string; isError: boolean } {
  if (!isObject(response)) return { text: '', isError: false }
  if (typeof response.output === 'string') return { text: response.output, isError: false }
  if (response.error !== undefined)
    return { text: typeof response.error === 'string' ? response.error : JSON.stringify(response.error), isError: true }
  return { text: JSON.stringify(response), isError: false }
}

function readContent(c: unknown, i: number): WireMessage[] {
  const parts = partsOf(c, i)
  const role = (c as { role?: unknown }).role ?? 'user'
  if (role === 'model') {
    const calls = parts
      .filter((p) => isObject(p.functionCall))
      .map((p, j) => {
        const call = p.functionCall as Record<string, unknown>
        if (typeof call.name !== 'string') throw badRequest(`contents[${i}].parts[${j}].functionCall.name: required`)
        return {
          id: typeof call.id === 'string' ? call.id : undefined,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
        }
      })
    return [{ role: 'assistant', content: textsOf(parts).join('\n'), ...(calls.length ? { tool_calls: calls } : {}) }]
  }
  if (role !== 'user' && role !== 'function') throw badRequest(`contents[${i}].role: must be "user" or "model"`)
  const results = parts.filter((p) => isObject(p.functionResponse))
  if (results.length === 0) return [{ role: 'user', content: promptOf(textsOf(parts)) }]
  const read = results.map((p): WireMessage => {
    const r = p.functionResponse as Record<string, unknown>
    const { text, isError } = resultText(r.response)
    return {
      role: 'tool',
      tool_call_id: typeof r.id === 'string' ? r.id : undefined,
      name: typeof r.name === 'string' ? r.name : undefined,
      content: text,
      isError,
    }
  })
  return resultsAndPrompt(read, textsOf(parts))
}

/** The request's contents as chat messages; `generateContentRequest` wraps them for countTokens. */
export function parseGeminiRequest(text: string): WireMessage[] {
  let b = parseObject(text)
  if (isObject(b.generateContentRequest)) b = b.generateContentRequest
  if (!Array.isArray(b.contents)) throw badRequest('contents: required, a list of Content')
  return b.contents.flatMap(readContent)
}
