/**
 * The real providers and how the environment configures them (docs/providers.md):
 *
 * | provider            | needs                     | optional                                                  |
 * |---------------------|---------------------------|-----------------------------------------------------------|
 * | `anthropic`         | `ANTHROPIC_API_KEY`       | `ANTHROPIC_BASE_URL`, `CHIMERA_ANTHROPIC_THINKING_BUDGET` |
 * | `openai`            | `OPENAI_API_KEY`          | `OPENAI_BASE_URL`                                         |
 * | `openai-compatible` | `CHIMERA_OPENAI_BASE_URL` | `CHIMERA_OPENAI_API_KEY`, `CHIMERA_OPENAI_CONTEXT_WINDOW` |
 *
 * Everything is read from the `env` passed in, never from `process.env` behind our back: each
 * SDK provider gets its key and base URL explicitly (the SDKs would otherwise read their own
 * variables). A blank variable counts as unset. The SDK packages load on the first model call
 * (`lazy`), so building the registry costs a process that stays offline nothing.
 */
import type { LanguageModel } from 'ai'
import type { Logger } from '../log.ts'
import { DEFAULT_CONTEXT, knownModels, lookupModel } from './catalog.ts'
import type { RetryPolicy } from './retry.ts'
import { SdkProvider, type SdkProviderName } from './sdk-provider.ts'

export const PROVIDER_NAMES: readonly SdkProviderName[] = ['anthropic', 'openai', 'openai-compatible']

/** The model a configured provider runs when `--model` names none. */
export const DEFAULT_MODELS: Readonly<Partial<Record<SdkProviderName, string>>> = {
  anthropic: 'claude-sonnet-4-5',
  openai: 'gpt-4o',
}

export interface SetupOptions {
  logger?: Logger
  retry?: Partial<RetryPolicy>
}

export interface ProviderSetup {
  name: SdkProviderName
  /** The variable that configures it (named in errors). */
  needs: string
  configured: boolean
  /** The provider (only when configured). */
  create(): SdkProvider
}

/** A configuration mistake (a malformed URL or number): the process cannot start with it. */
export class ProviderConfigError extends Error {
  override name = 'ProviderConfigError'
}

/** A URL for messages: origin and path only (no user:password@, no query, no fragment). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`
  } catch {
    return '(invalid URL)'
  }
}

/** `make` once, on first use. */
function lazy(make: () => Promise<(modelId: string) => LanguageModel>): (modelId: string) => Promise<LanguageModel> {
  let factory: Promise<(modelId: string) => LanguageModel> | undefined
  return async (modelId) => (await (factory ??= make()))(modelId)
}

const value = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const v = env[name]?.trim()
  return v ? v : undefined
}

function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = value(env, name)
  if (raw === undefined) return fallback
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw new ProviderConfigError(`${name} is not a URL`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new ProviderConfigError(`${name} must be an http:// or https:// URL, got ${u.protocol}`)
  if (u.username || u.password)
    throw new ProviderConfigError(
      `${name} must not carry credentials (${displayUrl(raw)}); put the key in its API key variable`,
    )
  return raw.replace(/\/+$/, '')
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, min: number): number | undefined {
  const raw = value(env, name)
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min)
    throw new ProviderConfigError(`${name} must be an integer of at least ${min}, got ${JSON.stringify(raw)}`)
  return n
}

/** Every real provider with whether the environment configures it. */
export function providerSetups(env: NodeJS.ProcessEnv, opts: SetupOptions = {}): ProviderSetup[] {
  const common = { ...(opts.logger ? { logger: opts.logger } : {}), ...(opts.retry ? { retry: opts.retry } : {}) }
  const anthropicKey = value(env, 'ANTHROPIC_API_KEY')
  const openaiKey = value(env, 'OPENAI_API_KEY')
  const compatUrl = value(env, 'CHIMERA_OPENAI_BASE_URL')
  const compatKey = value(env, 'CHIMERA_OPENAI_API_KEY')
  return [
    {
      name: 'anthropic',
      needs: 'ANTHROPIC_API_KEY',
      configured: anthropicKey !== undefined,
      create() {
        const url = baseUrl(env, 'ANTHROPIC_BASE_URL', 'https://api.anthropic.com/v1')
        const budget = positiveInt(env, 'CHIMERA_ANTHROPIC_THINKING_BUDGET', 1024)
        return new SdkProvider({
          name: 'anthropic',
          languageModel: lazy(async () => {
            const { createAnthropic } = await import('@ai-sdk/anthropic')
            const sdk = createAnthropic({ apiKey: anthropicKey!, baseURL: url })
            return (id) => sdk(id)
          }),
          known: knownModels('anthropic'),
          contextWindow: (id) => lookupModel(id)?.info.context ?? DEFAULT_CONTEXT.anthropic!,
          priced: true,
          reasoning: 'signed',
          ...(budget
            ? { providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: budget } } } }
            : {}),
          endpoint: displayUrl(url),
          keyVar: 'ANTHROPIC_API_KEY',
          secrets: [anthropicKey!],
          ...common,
        })
      },
    },
    {
      name: 'openai',
      needs: 'OPENAI_API_KEY',
      configured: openaiKey !== undefined,
      create() {
        const url = baseUrl(env, 'OPENAI_BASE_URL', 'https://api.openai.com/v1')
        return new SdkProvider({
          name: 'openai',
          // The default OpenAI model API is Responses; `store: false` keeps conversations off
          // OpenAI's servers (we replay the history ourselves).
          languageModel: lazy(async () => {
            const { createOpenAI } = await import('@ai-sdk/openai')
            const sdk = createOpenAI({ apiKey: openaiKey!, baseURL: url })
            return (id) => sdk(id)
          }),
          known: knownModels('openai'),
          contextWindow: (id) => lookupModel(id)?.info.context ?? DEFAULT_CONTEXT.openai!,
          priced: true,
          reasoning: 'none',
          providerOptions: { openai: { store: false } },
          endpoint: displayUrl(url),
          keyVar: 'OPENAI_API_KEY',
          secrets: [openaiKey!],
          ...common,
        })
      },
    },
    {
      name: 'openai-compatible',
      needs: 'CHIMERA_OPENAI_BASE_URL',
      configured: compatUrl !== undefined,
      create() {
        const url = baseUrl(env, 'CHIMERA_OPENAI_BASE_URL', '')
        const context = positiveInt(env, 'CHIMERA_OPENAI_CONTEXT_WINDOW', 1024)
        return new SdkProvider({
          name: 'openai-compatible',
          languageModel: lazy(async () => {
            const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible')
            const sdk = createOpenAICompatible({
              name: 'openai-compatible',
              baseURL: url,
              ...(compatKey ? { apiKey: compatKey } : {}),
              includeUsage: true,
            })
            return (id) => sdk.chatModel(id)
          }),
          known: [],
          // Any name the server serves, except another provider's known ids and prefixes.
          acceptUnknownBare: (id) => !lookupModel(id) && !PROVIDER_NAMES.some((p) => id.startsWith(`${p}/`)),
          // The variable wins: a local server's window is what it was started with.
          contextWindow: (id) => context ?? lookupModel(id)?.info.context ?? DEFAULT_CONTEXT['openai-compatible']!,
          // A server we do not know the prices of: tokens are counted, the cost is null.
          priced: false,
          reasoning: 'all',
          endpoint: displayUrl(url),
          keyVar: 'CHIMERA_OPENAI_API_KEY',
          secrets: compatKey ? [compatKey] : [],
          ...common,
        })
      },
    },
  ]
}
