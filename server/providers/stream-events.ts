/**
 * The AI SDK's fullStream parts as our ProviderEvents: text, reasoning (with the Anthropic
 * signature, which arrives as provider metadata on the block's last delta), tool-input start
 * and deltas, complete tool calls, then usage and the finish reason from the step's end.
 * An `error` part is thrown as it is (the provider turns it into a ProviderError).
 */
import type { FinishReason as SdkFinishReason, LanguageModelUsage, TextStreamPart, ToolSet } from 'ai'
import type { CallUsage, FinishReason, ProviderEvent } from './types.ts'

export type Part = TextStreamPart<ToolSet>

/** Our usage from the SDK's: input excludes cached input; reasoning is part of output. */
export function toCallUsage(
  u: LanguageModelUsage | undefined,
  cost: (tokens: Omit<CallUsage, 'cost_usd'>) => number | null,
): CallUsage {
  const reported = u !== undefined && (u.inputTokens !== undefined || u.outputTokens !== undefined)
  const cacheRead = u?.inputTokenDetails?.cacheReadTokens ?? u?.cachedInputTokens ?? 0
  const cacheWrite = u?.inputTokenDetails?.cacheWriteTokens ?? 0
  const input = u?.inputTokenDetails?.noCacheTokens ?? Math.max(0, (u?.inputTokens ?? 0) - cacheRead - cacheWrite)
  const reasoning = u?.outputTokenDetails?.reasoningTokens ?? u?.reasoningTokens
  const tokens = {
    input_tokens: input,
    output_tokens: u?.outputTokens ?? 0,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    ...(reasoning !== undefined ? { reasoning_tokens: reasoning } : {}),
  }
  // No usage reported: the tokens are unknown, so is the cost (never a guessed 0).
  return { ...tokens, cost_usd: reported ? cost(tokens) : null }
}

export function toFinishReason(reason: SdkFinishReason, raw: string | undefined): FinishReason {
  if (raw === 'refusal') return 'refusal'
  switch (reason) {
    case 'stop':
      return 'end_turn'
    case 'tool-calls':
      return 'tool_use'
    case 'length':
      return 'max_tokens'
    case 'content-filter':
      return 'content_filter'
    default:
      return 'other'
  }
}

/** The response stream closed before the model's end-of-message. */
export class EndedEarlyError extends Error {
  override name = 'EndedEarlyError'
  constructor() {
    super('the response stream ended before the model finished')
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Maps one call's parts; `finished` tells whether the step's end arrived. */
export class StreamMapper {
  readonly #cost: (tokens: Omit<CallUsage, 'cost_usd'>) => number | null
  readonly #warn: (message: string) => void
  #finished = false

  constructor(opts: { cost: (tokens: Omit<CallUsage, 'cost_usd'>) => number | null; warn: (message: string) => void }) {
    this.#cost = opts.cost
    this.#warn = opts.warn
  }

  get finished(): boolean {
    return this.#finished
  }

  map(part: Part): ProviderEvent[] {
    switch (part.type) {
      case 'text-delta':
        return part.text ? [{ type: 'text', text: part.text }] : []
      case 'reasoning-delta': {
        const signature = signatureOf(part.providerMetadata)
        if (!part.text && signature === undefined) return []
        return [{ type: 'reasoning', text: part.text, ...(signature !== undefined ? { signature } : {}) }]
      }
      case 'reasoning-start':
        if (part.providerMetadata?.anthropic?.redactedData !== undefined)
          this.#warn('the model returned a redacted thinking block; it is not kept in the history')
        return []
      case 'tool-input-start':
        return [{ type: 'tool_input_start', call_id: part.id, tool: part.toolName }]
      case 'tool-input-delta':
        return part.delta ? [{ type: 'tool_input_delta', call_id: part.id, delta: part.delta }] : []
      case 'tool-call':
        // An invalid call (unparsable arguments, unknown tool) still gets a result from the
        // loop, which validates the arguments and names the problem to the model.
        return [
          {
            type: 'tool_call',
            call: { call_id: part.toolCallId, tool: part.toolName, args: isObject(part.input) ? part.input : {} },
          },
        ]
      case 'start-step':
        for (const w of part.warnings) this.#warn(warningText(w))
        return []
      case 'finish-step': {
        if (this.#finished) return []
        // A model stream that closed without its end (no finish reason, no usage): the SDK
        // still ends the step, as "other". A reply cut short must not pass for a whole one.
        if (
          part.finishReason === 'other' &&
          part.rawFinishReason === undefined &&
          part.usage.inputTokens === undefined &&
          part.usage.outputTokens === undefined
        ) {
          throw new EndedEarlyError()
        }
        this.#finished = true
        return [
          { type: 'usage', ...toCallUsage(part.usage, this.#cost) },
          { type: 'finish', reason: toFinishReason(part.finishReason, part.rawFinishReason) },
        ]
      }
      case 'error':
        throw part.error
      default:
        return []
    }
  }
}

function signatureOf(meta: Record<string, Record<string, unknown>> | undefined): string | undefined {
  const s = meta?.anthropic?.signature
  return typeof s === 'string' ? s : undefined
}

function warningText(w: unknown): string {
  if (!isObject(w)) return String(w)
  const what = [w.type, w.feature ?? w.setting, w.message ?? w.details].filter((x) => typeof x === 'string')
  return what.join(': ')
}
