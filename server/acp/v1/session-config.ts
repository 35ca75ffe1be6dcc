/**
 * A session's selectors on the v1 wire: `modes` (for clients that still read them) and the
 * `configOptions` Zed renders — the model picker (`category: model`) and the mode
 * (`category: mode`). `set_config_option` answers with the complete list.
 */
import type { z } from 'zod'
import type { SessionConfigOptionSchema, SessionModeStateSchema } from '../../../generated/acp/v1-schema.gen.ts'
import { MODES } from '../../core/session.ts'

export type ConfigOption = z.input<typeof SessionConfigOptionSchema>
export type ModeState = z.input<typeof SessionModeStateSchema>

const MODE_INFO: Record<string, { name: string; description: string }> = {
  build: { name: 'Build', description: 'Edit files and run commands' },
  plan: { name: 'Plan', description: 'Read and plan; no edits' },
}

export function modeState(mode: string): ModeState {
  return {
    currentModeId: mode,
    availableModes: MODES.map((id) => ({ id, ...(MODE_INFO[id] ?? { name: id, description: '' }) })),
  }
}

/** The complete option list; `models` always includes the current model. */
export function configOptions(models: readonly string[], model: string, mode: string): ConfigOption[] {
  const ids = models.includes(model) ? models : [model, ...models]
  return [
    {
      id: 'model',
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: model,
      options: ids.map((m) => ({ value: m, name: m })),
    },
    {
      id: 'mode',
      name: 'Mode',
      category: 'mode',
      type: 'select',
      currentValue: mode,
      options: MODES.map((id) => ({
        value: id,
        name: MODE_INFO[id]?.name ?? id,
        description: MODE_INFO[id]?.description ?? null,
      })),
    },
  ]
}
