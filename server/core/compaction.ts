/**
 * Compaction: the history summarised into one message so it fits the model's context. The
 * summary is deterministic (no model call): each message becomes one line, `role: first line`,
 * clipped, so the offline model and tests see exactly what was kept.
 */
import type { ChatMessage } from '../../generated/schemas.gen.ts'

const CLIP = 200

export function summarise(messages: ChatMessage[]): string {
  const lines = messages.map((m) => {
    const text = m.role === 'tool' && m.tool_result ? `${m.tool_result.tool} ${m.tool_result.ok ? 'ok' : 'error'}: ${m.content}` : m.content
    const first = text.split('\n')[0] ?? ''
    return `- ${m.role}: ${first.length > CLIP ? `${first.slice(0, CLIP)}…` : first}`
  })
  return [`Summary of the conversation so far (${messages.length} messages):`, ...lines].join('\n')
}
