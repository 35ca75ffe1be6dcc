/**
 * The provider interface the agent loop drives: one streamed model call per step. Messages
 * and tool calls use the shared shapes of specs/schemas/common.yaml.
 */
import type { ChatMessage, ToolCall } from '../../generated/schemas.gen.ts'

export interface ToolSchema {
  name: string
  description: string
  input_schema: Record<string, unknown>
}

export interface ModelRequest {
  model: string
  messages: ChatMessage[]
  tools: ToolSchema[]
  signal: AbortSignal
}

export type ProviderEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'usage'; input_tokens: number; output_tokens: number; cost_usd: number }

export interface Provider {
  /** Provider name (`offline`, `anthropic`, `openai`, …). */
  readonly name: string
  /** Model ids this provider serves. */
  models(): readonly string[]
  /** The context window of `model`, in tokens (compaction keeps the history under it). */
  contextWindow(model: string): number
  /** Stream one model call. Throws ProviderError on failure; stops when `signal` aborts. */
  stream(req: ModelRequest): AsyncIterable<ProviderEvent>
}

/** A model-call failure (the loop turns it into an `error` event; nothing crashes). */
export class ProviderError extends Error {
  override name = 'ProviderError'
}
