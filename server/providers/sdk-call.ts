/**
 * One model call through the AI SDK: `streamText` for one step (tools without `execute`, the
 * SDK's own retries off), its fullStream mapped to ProviderEvents, our retry policy around it
 * (retried only while nothing was streamed), and every failure a safe ProviderError. Loaded
 * on the first call, so a process that never calls a real model never loads the SDK.
 */
import { streamText, type LanguageModel } from 'ai'
import type { Logger } from '../log.ts'
import type { ModelInfo } from './catalog.ts'
import { costUsd } from './cost.ts'
import { toProviderError, type ErrorContext } from './errors.ts'
import { DEFAULT_RETRY, decideRetry, type RetryPolicy } from './retry.ts'
import { EndedEarlyError, StreamMapper } from './stream-events.ts'
import { toModelMessages, toToolSet, type ReasoningReplay } from './to-model-messages.ts'
import type { ModelRequest, ProviderEvent } from './types.ts'

export interface CallSettings {
  model: LanguageModel
  /** Prices of the model, if known (else the cost is null). */
  info: ModelInfo | undefined
  reasoning: ReasoningReplay
  providerOptions: Parameters<typeof streamText>[0]['providerOptions'] | undefined
  errors: ErrorContext
  /** Overrides of the default retry policy. */
  retry: Partial<RetryPolicy>
  logger: Logger
}

export async function* streamCall(req: ModelRequest, s: CallSettings): AsyncIterable<ProviderEvent> {
  const { system, messages } = toModelMessages(req.messages, s.reasoning)
  const tools = toToolSet(req.tools)
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...s.retry }
  for (let attempt = 0; ; attempt++) {
    const mapper = new StreamMapper({
      cost: (tokens) => costUsd(tokens, s.info),
      warn: (m) => s.logger.warn(`${s.errors.provider}: ${m}`),
    })
    let streamed = false
    try {
      const result = streamText({
        model: s.model,
        ...(system !== undefined ? { system } : {}),
        messages,
        ...(tools ? { tools } : {}),
        abortSignal: req.signal,
        maxRetries: 0,
        // Errors arrive as `error` parts (the mapper throws them); the default prints them.
        onError: () => {},
        ...(s.providerOptions ? { providerOptions: s.providerOptions } : {}),
      })
      for await (const part of result.fullStream) {
        // Parts already buffered when the caller aborted must not reach it.
        if (req.signal.aborted) throw req.signal.reason
        for (const ev of mapper.map(part)) {
          if (req.signal.aborted) throw req.signal.reason
          streamed = true
          yield ev
        }
      }
      if (req.signal.aborted) throw req.signal.reason
      if (!mapper.finished) throw new EndedEarlyError()
      return
    } catch (err) {
      if (req.signal.aborted) throw req.signal.reason
      const decision = streamed ? ({ retry: false } as const) : decideRetry(err, attempt, retry)
      if (decision.retry) {
        const why = toProviderError(err, s.errors, { attempts: attempt + 1, midStream: false }).message
        s.logger.warn(`${why}; retrying in ${decision.delayMs} ms (retry ${attempt + 1} of ${retry.maxRetries})`)
        await retry.sleep(decision.delayMs, req.signal)
        continue
      }
      const retryAfterMs = 'retryAfterMs' in decision ? decision.retryAfterMs : undefined
      throw toProviderError(err, s.errors, {
        attempts: attempt + 1,
        midStream: streamed,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      })
    }
  }
}
