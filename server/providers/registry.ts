/**
 * The process's model registry (docs/decisions/0042-one-provider-per-process.md): the offline
 * model plus the one real provider this process runs — the one `--model provider/model` (or a
 * bare known id) names, else the first configured of anthropic, openai, openai-compatible.
 * Every other real provider sits behind a stand-in that claims its model ids and explains why
 * it cannot serve them (its variable is unset, or another provider is this process's), so
 * `check` fails with that reason (`--model gpt-4o` without OPENAI_API_KEY: exit 2) and a
 * session reloaded with such a model gets that reason as a provider error, not a crash.
 */
import { ModelRegistry, unknownModel } from '../core/model-registry.ts'
import { ChimeraError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { lookupModel } from './catalog.ts'
import { DEFAULT_MODELS, providerSetups, type ProviderSetup, type SetupOptions } from './configure.ts'
import { OFFLINE_MODEL, OfflineProvider } from './offline.ts'
import type { SdkProviderName } from './sdk-provider.ts'
import { ProviderError, type ModelRequest, type Provider, type ProviderEvent } from './types.ts'

/** A provider this process cannot use; it claims its models to say why. */
export class UnavailableProvider implements Provider {
  readonly name: SdkProviderName
  readonly #reason: string

  constructor(name: SdkProviderName, reason: string) {
    this.name = name
    this.#reason = reason
  }

  /** Why `model` cannot run here. */
  explain(model: string): string {
    return `model "${model}" needs the ${this.name} provider, which ${this.#reason}`
  }

  models(): readonly string[] {
    return []
  }

  accepts(model: string): boolean {
    return model.startsWith(`${this.name}/`) || lookupModel(model)?.info.provider === this.name
  }

  contextWindow(): number {
    // Never worth compacting for: the call that follows fails with the reason.
    return Number.MAX_SAFE_INTEGER
  }

  // eslint-disable-next-line require-yield -- the first pull fails with the reason; nothing is ever streamed
  async *stream(req: ModelRequest): AsyncIterable<ProviderEvent> {
    throw new ProviderError(this.explain(req.model))
  }
}

export interface ProviderEntry {
  name: string
  configured: boolean
}

export class ProviderRegistry extends ModelRegistry {
  /** Every provider with whether its credentials are set (`GET /providers` `available`). */
  readonly available: readonly ProviderEntry[]

  constructor(providers: Provider[], opts: { defaultModel: string; available: ProviderEntry[] }) {
    super(providers, { defaultModel: opts.defaultModel })
    this.available = opts.available
  }

  override models(): string[] {
    return this.providers()
      .filter((p) => !(p instanceof UnavailableProvider))
      .flatMap((p) => [...p.models()])
  }

  override check(model: string): void {
    const p = this.providerFor(model)
    if (p instanceof UnavailableProvider) throw new ChimeraError('model_unavailable', p.explain(model))
    if (!p) throw unknownModel(model, this.models())
  }
}

export interface BuildOptions extends SetupOptions {
  /** The `--model` flag: picks the provider this process runs. */
  model?: string
  logger?: Logger
}

/** The provider a model id belongs to, by prefix or by the catalog; undefined: not decidable. */
function homeOf(model: string, setups: readonly ProviderSetup[]): ProviderSetup | undefined {
  const byPrefix = setups.find((s) => model.startsWith(`${s.name}/`))
  if (byPrefix) return byPrefix
  const known = lookupModel(model)
  if (known) return setups.find((s) => s.name === known.info.provider)
  // Any other bare name is for an OpenAI-compatible server, when there is one.
  const compat = setups.find((s) => s.name === 'openai-compatible')
  return compat?.configured && !model.includes('/') && model !== OFFLINE_MODEL ? compat : undefined
}

/** The registry for this process, from the environment and the `--model` flag. */
/** A registry of the offline provider alone (its model is the default). */
export function offlineModels(): ModelRegistry {
  return new ModelRegistry([new OfflineProvider()], { defaultModel: OFFLINE_MODEL })
}

export function buildModelRegistry(env: NodeJS.ProcessEnv = process.env, opts: BuildOptions = {}): ProviderRegistry {
  const setups = providerSetups(env, opts)
  const named = opts.model !== undefined && opts.model !== OFFLINE_MODEL ? homeOf(opts.model, setups) : undefined
  const chosen = opts.model !== undefined ? (named?.configured ? named : undefined) : setups.find((s) => s.configured)
  const providers: Provider[] = [new OfflineProvider()]
  if (chosen) providers.push(chosen.create())
  for (const s of setups) {
    if (s === chosen) continue
    const reason = !s.configured
      ? `is not configured: set ${s.needs}`
      : `is not this process's: one provider per process, and this one runs ${chosen?.name ?? 'the offline model'}; restart with --model ${s.name}/<model>`
    providers.push(new UnavailableProvider(s.name, reason))
  }
  const defaultModel =
    opts.model ??
    (chosen && DEFAULT_MODELS[chosen.name] ? `${chosen.name}/${DEFAULT_MODELS[chosen.name]}` : OFFLINE_MODEL)
  if (chosen && opts.model === undefined && !DEFAULT_MODELS[chosen.name]) {
    opts.logger?.info(
      `${chosen.name} is configured; sessions use the offline model unless they name one (--model ${chosen.name}/<model>)`,
    )
  }
  return new ProviderRegistry(providers, {
    defaultModel,
    available: [
      { name: 'offline', configured: true },
      ...setups.map((s) => ({ name: s.name, configured: s.configured })),
    ],
  })
}

/** Provider and bare model id of `model` as this registry serves it. */
export function describeModel(registry: ModelRegistry, model: string): { provider: string; model: string } {
  const provider = registry.providerFor(model)?.name ?? 'unknown'
  const prefix = `${provider}/`
  return { provider, model: model.startsWith(prefix) ? model.slice(prefix.length) : model }
}

/** `GET /providers` (docs/http.md): the process's active provider and model, and every provider. */
export function providersResponse(registry: ModelRegistry): {
  active: { provider: string; model: string }
  available: ProviderEntry[]
} {
  const available =
    registry instanceof ProviderRegistry
      ? [...registry.available]
      : registry.providers().map((p) => ({ name: p.name, configured: true }))
  return { active: describeModel(registry, registry.defaultModel), available }
}

/** The `model` and `provider` fields of `GET /info`. */
export function infoFields(registry: ModelRegistry): { model: string; provider: string } {
  const { provider, model } = describeModel(registry, registry.defaultModel)
  return { model, provider }
}
