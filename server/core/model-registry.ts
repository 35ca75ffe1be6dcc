/**
 * Which provider serves which model. The providers are given to it (the core imports no
 * provider): server/providers/registry.ts builds the process's registry (the offline provider
 * always first: docs/providers.md), `offlineModels()` the offline-only one.
 */
import type { Provider } from '../providers/types.ts'
import { ChimeraError } from '../errors.ts'

export class ModelRegistry {
  readonly #providers: Provider[]
  /** The model of sessions that name none (the process's configured provider, else offline). */
  readonly defaultModel: string

  /** `defaultModel`: default the first provider's first model. */
  constructor(providers: Provider[], opts: { defaultModel?: string } = {}) {
    const first = providers[0]?.models()[0]
    const defaultModel = opts.defaultModel ?? first
    if (defaultModel === undefined) throw new Error('a model registry needs a provider or a default model')
    this.#providers = providers
    this.defaultModel = defaultModel
  }

  /** The provider for `model`, or undefined when no configured provider serves it. */
  providerFor(model: string): Provider | undefined {
    return this.#providers.find((p) => p.accepts(model))
  }

  /** Every model id, for error messages and model pickers. */
  models(): string[] {
    return this.#providers.flatMap((p) => [...p.models()])
  }

  providers(): readonly Provider[] {
    return this.#providers
  }

  /** Throws `unknown_model` for a model no provider serves. */
  check(model: string): void {
    if (!this.providerFor(model)) throw unknownModel(model, this.models())
  }
}

/** A model no configured provider serves: `unknown_model`, listing the known ones. */
export const unknownModel = (model: string, known: string[]): ChimeraError<'unknown_model'> =>
  new ChimeraError('unknown_model', `unknown model "${model}"; available: ${known.join(', ')}`)
