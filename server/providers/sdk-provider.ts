/**
 * A real provider through the AI SDK. Anthropic, OpenAI and OpenAI-compatible servers differ
 * only in the options `configure.ts` passes: how to make the SDK model, which ids they know,
 * context windows, whether the catalog prices them, and which reasoning goes back. The call
 * itself (`sdk-call.ts`) and the SDK are loaded on the first model call.
 */
import type { LanguageModel, streamText } from 'ai'
import type { Logger } from '../log.ts'
import { noopLogger } from '../log.ts'
import { lookupModel } from './catalog.ts'
import type { ErrorContext } from './errors.ts'
import type { RetryPolicy } from './retry.ts'
import type { ReasoningReplay } from './to-model-messages.ts'
import type { ModelRequest, Provider, ProviderEvent } from './types.ts'

export type SdkProviderName = 'anthropic' | 'openai' | 'openai-compatible'

export interface SdkProviderOptions {
  name: SdkProviderName
  /** The SDK model for a bare model id (loads the SDK provider package on first use). */
  languageModel: (modelId: string) => Promise<LanguageModel>
  /** Bare model ids this provider knows (catalog rows), for pickers and bare `--model` ids. */
  known: readonly string[]
  /** Accept bare ids that are not in `known` (an OpenAI-compatible server serves any name). */
  acceptUnknownBare?: (modelId: string) => boolean
  /** Context window of a bare model id (the catalog's, else a conservative default). */
  contextWindow: (modelId: string) => number
  /** Price models from the catalog (false: cost is always null, e.g. a local server). */
  priced: boolean
  reasoning: ReasoningReplay
  providerOptions?: Parameters<typeof streamText>[0]['providerOptions']
  /** Endpoint as shown in messages, the key's variable, the values never to show. */
  endpoint: string
  keyVar: string
  secrets: readonly string[]
  retry?: Partial<RetryPolicy>
  logger?: Logger
}

export class SdkProvider implements Provider {
  readonly name: SdkProviderName
  readonly #o: SdkProviderOptions
  readonly #retry: Partial<RetryPolicy>
  readonly #logger: Logger

  constructor(opts: SdkProviderOptions) {
    this.name = opts.name
    this.#o = opts
    this.#retry = opts.retry ?? {}
    this.#logger = opts.logger ?? noopLogger
    // The SDK prints warnings with console.info/warn (stdout is the wire on stdio transports);
    // the call logs each step's warnings through the injected logger instead.
    ;(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false
  }

  /** The bare model id of `model` (`anthropic/claude-x` → `claude-x`). */
  modelId(model: string): string {
    const prefix = `${this.name}/`
    return model.startsWith(prefix) ? model.slice(prefix.length) : model
  }

  models(): readonly string[] {
    return this.#o.known.map((id) => `${this.name}/${id}`)
  }

  accepts(model: string): boolean {
    if (model.startsWith(`${this.name}/`)) return this.modelId(model).length > 0
    if (this.#o.known.includes(model) || lookupModel(model)?.info.provider === this.name) return true
    return this.#o.acceptUnknownBare?.(model) ?? false
  }

  contextWindow(model: string): number {
    return this.#o.contextWindow(this.modelId(model))
  }

  async *stream(req: ModelRequest): AsyncIterable<ProviderEvent> {
    const modelId = this.modelId(req.model)
    const row = this.#o.priced ? lookupModel(modelId) : undefined
    const errors: ErrorContext = {
      provider: this.name,
      model: modelId,
      endpoint: this.#o.endpoint,
      keyVar: this.#o.keyVar,
      secrets: this.#o.secrets,
    }
    const { streamCall } = await import('./sdk-call.ts')
    yield* streamCall(req, {
      model: await this.#o.languageModel(modelId),
      info: row && row.info.provider === this.name ? row.info : undefined,
      reasoning: this.#o.reasoning,
      providerOptions: this.#o.providerOptions,
      errors,
      retry: this.#retry,
      logger: this.#logger,
    })
  }
}
