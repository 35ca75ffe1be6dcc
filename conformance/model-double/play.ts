/**
 * What the model double answers to a chat-completions request, decided exactly as the offline
 * model decides (server/providers/directives.ts): if tool results follow the newest user
 * message, the reply is one line per result; otherwise the directives of that message are
 * played. Only the reading of the OpenAI wire is the double's own:
 *
 * - user content is a string or an array of `{type: "text", text}` parts (joined);
 * - a `tool` message's tool name is looked up by `tool_call_id` in the assistant message that
 *   made the call;
 * - a tool result whose content starts with `Error: ` is an error result (the chat-completions
 *   wire has no error flag; Chimera's providers send failed results that way); so is one a wire
 *   flags (`isError`).
 *
 * The other wires (Responses, Anthropic Messages, Gemini) read their requests into these
 * messages and play the same plan, grouped into `segments` (runs of text or reasoning).
 */
import {
  parseDirectives,
  planFirstStep,
  resultsReply,
  tokensFor,
  wordChunks,
  type Move,
  type Plan,
  type ResultSeen,
} from '../../server/providers/directives.ts'
import { HttpError, sleep } from './wire.ts'

export interface WireToolCall {
  id?: string
  type?: string
  function?: { name?: string; arguments?: string }
}

export interface WireMessage {
  role: string
  content?: unknown
  tool_calls?: WireToolCall[]
  tool_call_id?: string
  reasoning_content?: string
  /** A tool result's tool name when the wire says it on the result itself (Gemini's functionResponse). */
  name?: string
  /** A tool result the wire flags as failed (Anthropic's `is_error`), whatever its text. */
  isError?: boolean
}

export const ERROR_PREFIX = 'Error: '

/** Text of a message's content (string, or text parts joined). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((p) =>
      typeof p === 'object' &&
      p !== null &&
      (p as { type?: unknown }).type === 'text' &&
      typeof (p as { text?: unknown }).text === 'string'
        ? (p as { text: string }).text
        : '',
    )
    .join('')
}

/** The plan for a request's messages; throws ProviderError for a malformed directive. */
export function planFor(messages: readonly WireMessage[]): Plan {
  let lastUser = -1
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') {
      lastUser = i
      break
    }
  }
  const after = messages.slice(lastUser + 1)
  const names = new Map<string, string>()
  for (const m of after) for (const c of m.tool_calls ?? []) if (c.id) names.set(c.id, c.function?.name ?? 'tool')
  const results: ResultSeen[] = after
    .filter((m) => m.role === 'tool')
    .map((m) => {
      const text = textOf(m.content)
      const tool = names.get(m.tool_call_id ?? '') ?? m.name ?? 'tool'
      if (text.startsWith(ERROR_PREFIX)) return { tool, ok: false, text: text.slice(ERROR_PREFIX.length) }
      return m.isError ? { tool, ok: false, text } : { tool, ok: true, text }
    })
  if (results.length > 0) {
    const text = resultsReply(results)
    return { moves: [{ kind: 'text', text }], calls: [], written: text.length }
  }
  return planFirstStep(lastUser === -1 ? '' : textOf(messages[lastUser]!.content))
}

/** Whether text holds a directive line (a malformed one counts: playing it reports the error). */
function holdsDirective(text: string): boolean {
  try {
    return parseDirectives(text).length > 0
  } catch {
    return true
  }
}

/**
 * A user turn that carries tool results (Anthropic's `tool_result` blocks, Gemini's
 * `functionResponse` parts) and text: the results, then the text as a new user message only
 * when it holds a directive. Clients put their own notes beside results (reminders, "request
 * interrupted"), which are no new prompt; but after a cancelled call the next prompt arrives in
 * the same turn as the refused call's result, and that prompt is what must be played.
 */
export function resultsAndPrompt(results: WireMessage[], texts: readonly string[]): WireMessage[] {
  const prompt = promptOf(texts)
  return holdsDirective(prompt) ? [...results, { role: 'user', content: prompt }] : results
}

/**
 * The prompt a user turn of separate text blocks (Anthropic) or parts (Gemini) stands for: the
 * last block that holds a directive, else all of them joined by newlines. A client may merge
 * turns into one message — Claude Code sends a prompt whose turn failed again beside the next
 * one, after its reminders — and, as everywhere, only the newest prompt is played.
 */
export function promptOf(texts: readonly string[]): string {
  for (let i = texts.length - 1; i >= 0; i--) if (holdsDirective(texts[i]!)) return texts[i]!
  return texts.join('\n')
}

/** planFor, with a malformed directive refused as a 400 (the client sent it). */
export function planOrRefuse(messages: readonly WireMessage[]): Plan {
  try {
    return planFor(messages)
  } catch (e) {
    throw new HttpError(400, (e as Error).message, 'invalid_request_error')
  }
}

/** Consecutive text (or reasoning) moves become one segment of word-sized chunks; sleeps and failures stay moves. */
export type Segment = { kind: 'text' | 'reasoning'; chunks: string[] } | Exclude<Move, { kind: 'text' | 'reasoning' }>

export function segments(plan: Plan): Segment[] {
  const out: Segment[] = []
  for (const m of plan.moves) {
    if (m.kind === 'text' || m.kind === 'reasoning') {
      const last = out.at(-1)
      if (last?.kind === m.kind) last.chunks.push(...wordChunks(m.text))
      else out.push({ kind: m.kind, chunks: wordChunks(m.text) })
    } else out.push(m)
  }
  return out
}

/**
 * A reply sent at once (not streamed), played: after the plan's sleeps, its text and reasoning in
 * order, or the failure it plays; `undefined` when the client left during a sleep. Each wire
 * shapes the blocks (and the failure) its own way.
 */
export async function playAtOnce(
  plan: Plan,
  signal: AbortSignal,
): Promise<{ blocks: { kind: 'text' | 'reasoning'; text: string }[] } | { fail: string } | undefined> {
  const blocks: { kind: 'text' | 'reasoning'; text: string }[] = []
  for (const seg of segments(plan)) {
    if (seg.kind === 'sleep') {
      if (!(await sleep(seg.ms, signal))) return undefined
    } else if (seg.kind === 'fail') return { fail: seg.message }
    else blocks.push({ kind: seg.kind, text: seg.chunks.join('') })
  }
  return { blocks }
}

/** Characters the model reads (usage: ceil(chars / 4) prompt tokens). */
export function charsRead(messages: readonly WireMessage[]): number {
  let n = 0
  for (const m of messages) {
    n += textOf(m.content).length
    for (const c of m.tool_calls ?? []) n += (c.function?.arguments ?? '').length
  }
  return n
}

export const usageOf = (
  messages: readonly WireMessage[],
  plan: Plan,
): { prompt_tokens: number; completion_tokens: number; total_tokens: number } => {
  const prompt = tokensFor(charsRead(messages))
  const completion = tokensFor(plan.written)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** `s` in pieces of at most `size` characters (tool-call arguments arrive split across chunks). */
export function pieces(s: string, size: number): string[] {
  const out: string[] = []
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size))
  return out.length ? out : ['']
}
