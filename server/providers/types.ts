/**
 * The provider interface the agent loop drives: one streamed model call per step. Messages
 * and tool calls use the shared shapes of specs/schemas/common.yaml. Every provider — the
 * offline model, Anthropic, OpenAI, any OpenAI-compatible server — yields the same events, so
 * the loop and every wire stay provider-agnostic.
 *
 * A call streams, in any interleaving the provider produces: `text` and `reasoning` chunks,
 * `tool_input_start` / `tool_input_delta` while a tool call's arguments arrive, then one
 * complete `tool_call` per call; then `usage` (at most once per call) and `finish` (exactly
 * once, last). A failure throws `ProviderError` (never a raw SDK error: its message must be
 * safe to show, with no key or header in it); an aborted `signal` ends the stream with the
 * signal's reason.
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

/** Why a model call stopped (provider-neutral). */
export type FinishReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'content_filter' | 'other'

/** Token counts of one model call. `cost_usd` is null when the model has no known price. */
export interface CallUsage {
  input_tokens: number
  output_tokens: number
  cache_read_tokens?: number
  cache_write_tokens?: number
  reasoning_tokens?: number
  cost_usd: number | null
}

export type ProviderEvent =
  | { type: 'text'; text: string }
  /** Reasoning text; `signature` (Anthropic) arrives with the last chunk of a reasoning block. */
  | { type: 'reasoning'; text: string; signature?: string }
  | { type: 'tool_input_start'; call_id: string; tool: string }
  | { type: 'tool_input_delta'; call_id: string; delta: string }
  | { type: 'tool_call'; call: ToolCall }
  | ({ type: 'usage' } & CallUsage)
  | { type: 'finish'; reason: FinishReason }

export interface Provider {
  /** Provider name (`offline`, `anthropic`, `openai`, `openai-compatible`). */
  readonly name: string
  /** Model ids this provider knows (for model pickers, `GET /providers`). */
  models(): readonly string[]
  /** True when this provider serves `model` (a known id, or one it will pass through). */
  accepts(model: string): boolean
  /** The context window of `model`, in tokens (compaction keeps the history under it). */
  contextWindow(model: string): number
  /** Stream one model call. Throws ProviderError on failure; stops when `signal` aborts. */
  stream(req: ModelRequest): AsyncIterable<ProviderEvent>
}

/** A model-call failure (the loop turns it into an `error` event; nothing crashes). */
export class ProviderError extends Error {
  override name = 'ProviderError'
  /** HTTP status of the upstream answer, when there was one. */
  readonly status?: number
  constructor(message: string, opts: { status?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    if (opts.status !== undefined) this.status = opts.status
  }
}
