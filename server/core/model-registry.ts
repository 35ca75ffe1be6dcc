/** Which provider serves which model. The offline provider is always present (docs/providers.md). */
import { OFFLINE_MODEL, OfflineProvider } from '../providers/offline.ts'
import type { Provider } from '../providers/types.ts'
import { ChimeraError } from '../errors.ts'

export class ModelRegistry {
  readonly #providers: Provider[]
  /** The model of sessions that name none (the process's configured provider, else offline). */
  readonly defaultModel: string

  constructor(providers: Provider[] = [new OfflineProvider()], opts: { defaultModel?: string } = {}) {
    this.#providers = providers
    this.defaultModel = opts.defaultModel ?? OFFLINE_MODEL
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
