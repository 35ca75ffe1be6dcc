/**
 * Compaction: the history summarised into one message so it fits the model's context. The
 * summary is deterministic (no model call): each message becomes one line, `role: first line`,
 * clipped, so the offline model and tests see exactly what was kept.
 *
 * `compact` (a client's request, between turns) summarises everything. Automatic compaction
 * runs inside a turn, before a model call, when the history's estimated size passes
 * AUTO_COMPACT_RATIO of the model's context window: it summarises everything before the
 * current turn's user message and keeps that message and what followed it. The event records
 * how many messages remain (`messages_after` = summary + kept), so a reload rebuilds the same
 * history.
 */
import type { ChatMessage } from '../../generated/schemas.gen.ts'

const CLIP = 200

export function summarise(messages: ChatMessage[]): string {
  const lines = messages.map((m) => {
    const text =
      m.role === 'tool' && m.tool_result
        ? `${m.tool_result.tool} ${m.tool_result.ok ? 'ok' : 'error'}: ${m.content}`
        : m.content
    const first = text.split('\n')[0] ?? ''
    return `- ${m.role}: ${first.length > CLIP ? `${first.slice(0, CLIP)}…` : first}`
  })
  return [`Summary of the conversation so far (${messages.length} messages):`, ...lines].join('\n')
}

/** Compact automatically past this share of the context window. */
export const AUTO_COMPACT_RATIO = 0.8

/** Serialised length of a tool call's arguments, per arguments object (recorded calls' are not changed). */
const argsChars = new WeakMap<object, number>()

function argsLength(args: object): number {
  let n = argsChars.get(args)
  if (n === undefined) argsChars.set(args, (n = JSON.stringify(args).length))
  return n
}

/**
 * Token estimate of a history (characters / 4, as the offline model counts). It runs before every
 * model call, over the whole history: each call's arguments are serialised once, not once per step.
 */
export function estimateTokens(messages: ChatMessage[]): number {
  let chars = 0
  for (const m of messages) {
    chars += m.content.length
    for (const c of m.tool_calls ?? []) chars += argsLength(c.args)
  }
  return Math.ceil(chars / 4)
}

/** Index of the newest user message (the current turn's start), or -1. */
export function currentTurnStart(messages: ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i
  return -1
}
