/**
 * The offline model (docs/providers.md): no LLM, fully deterministic; the default provider and the
 * fixture every transcript relies on. It reads the newest user message:
 *
 * | line                          | effect                                                        |
 * |-------------------------------|---------------------------------------------------------------|
 * | `!call <Tool> <json-object>`  | calls that tool; all `!call` lines of a message form one step  |
 * | `!say <text>`                 | replies with exactly `<text>`                                 |
 * | `!think <text>`               | emits `<text>` as reasoning                                   |
 * | `!sleep <ms>`                 | waits that long (cancellable)                                 |
 * | `!fail <message>`             | the provider fails with that message                          |
 * | no directive                  | `offline model: no provider is configured. You said: <msg>`   |
 *
 * First step: directive lines run in the order written (`!say` text and `!think` reasoning
 * stream in word-sized chunks; several `!say` lines are joined by newlines); `!call` lines are
 * issued together when the lines are done; other lines are ignored when the message holds a
 * directive. If tool calls were issued, the next step replies one line per call, in call order
 * — `<Tool> ok: <first line of output>` or `<Tool> error: <message>` — and the turn ends.
 * Usage: ceil(characters read / 4) in, ceil(characters written / 4) out; cost 0.
 */
import type { ChatMessage, ToolCall } from '../../generated/schemas.gen.ts'
import { planFirstStep, resultsReply, tokensFor, wordChunks } from './directives.ts'
import { ProviderError, type ModelRequest, type Provider, type ProviderEvent } from './types.ts'

export { parseDirectives, wordChunks, type Directive } from './directives.ts'

export const OFFLINE_MODEL = 'offline'

function charsRead(messages: ChatMessage[]): number {
  let n = 0
  for (const m of messages) {
    n += m.content.length
    for (const c of m.tool_calls ?? []) n += JSON.stringify(c.args).length
    if (m.tool_result) n += (m.tool_result.output ?? m.tool_result.error ?? '').length
  }
  return n
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** The newest user message and the messages after it. */
function lastUserTurn(messages: ChatMessage[]): { user: ChatMessage | undefined; after: ChatMessage[] } {
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]!.role === 'user') return { user: messages[i], after: messages.slice(i + 1) }
  return { user: undefined, after: messages }
}

/** The offline model's context window in tokens (configurable to exercise compaction). */
export const OFFLINE_CONTEXT_WINDOW = 128_000

export class OfflineProvider implements Provider {
  readonly name = 'offline'
  readonly #window: number

  constructor(opts: { contextWindow?: number } = {}) {
    this.#window = opts.contextWindow ?? OFFLINE_CONTEXT_WINDOW
  }

  models(): readonly string[] {
    return [OFFLINE_MODEL]
  }

  accepts(model: string): boolean {
    return this.models().includes(model)
  }

  contextWindow(): number {
    return this.#window
  }

  async *stream(req: ModelRequest): AsyncIterable<ProviderEvent> {
    const { user, after } = lastUserTurn(req.messages)
    const read = charsRead(req.messages)
    const results = after.filter((m) => m.role === 'tool' && m.tool_result)
    if (results.length > 0) {
      // Second step: one line per call, in call order.
      const text = resultsReply(
        results.map((m) => ({
          tool: m.tool_result!.tool,
          ok: m.tool_result!.ok,
          text: (m.tool_result!.ok ? m.tool_result!.output : m.tool_result!.error) ?? '',
        })),
      )
      for (const chunk of wordChunks(text)) yield { type: 'text', text: chunk }
      yield { type: 'usage', input_tokens: tokensFor(read), output_tokens: tokensFor(text.length), cost_usd: 0 }
      yield { type: 'finish', reason: 'end_turn' }
      return
    }
    const plan = planFirstStep(user?.content ?? '')
    for (const move of plan.moves) {
      if (req.signal.aborted) throw req.signal.reason
      switch (move.kind) {
        case 'text':
        case 'reasoning':
          for (const chunk of wordChunks(move.text)) yield { type: move.kind, text: chunk }
          break
        case 'sleep':
          await sleep(move.ms, req.signal)
          break
        case 'fail':
          throw new ProviderError(move.message)
      }
    }
    const calls: ToolCall[] = plan.calls.map((c, i) => ({
      call_id: `call_${req.messages.length}_${i + 1}`,
      tool: c.tool,
      args: c.args,
    }))
    for (const call of calls) {
      yield { type: 'tool_input_start', call_id: call.call_id, tool: call.tool }
      yield { type: 'tool_input_delta', call_id: call.call_id, delta: JSON.stringify(call.args) }
      yield { type: 'tool_call', call }
    }
    yield { type: 'usage', input_tokens: tokensFor(read), output_tokens: tokensFor(plan.written), cost_usd: 0 }
    yield { type: 'finish', reason: calls.length ? 'tool_use' : 'end_turn' }
  }
}
