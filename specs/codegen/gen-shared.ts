/** specs/schemas/*.yaml → generated/schemas.gen.ts (one zod module for all shared shapes). */
import { readdirSync } from 'node:fs'
import { abs, readSpec } from './lib/files.ts'
import { tsModule, type GeneratedFile } from './lib/module.ts'
import { header } from './lib/files.ts'
import { SHARED_DIR, SHARED_MODULE } from './lib/refs.ts'

const EVENT_FACTS_MODULE = 'generated/event-facts.gen.ts'
import { schemasToZod } from './lib/zod.ts'

export function sharedFiles(): string[] {
  return readdirSync(abs(SHARED_DIR))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => `${SHARED_DIR}/${f}`)
}

/** Every shared schema by name; names are unique across files. */
export function sharedSchemas(): Record<string, unknown> {
  const all: Record<string, unknown> = {}
  for (const file of sharedFiles()) {
    for (const [name, schema] of Object.entries(readSpec(file) as Record<string, unknown>)) {
      if (name in all) throw new Error(`shared schema ${name} is defined twice (${file})`)
      all[name] = schema
    }
  }
  return all
}

export function generateShared(): GeneratedFile {
  const schemas = sharedSchemas()
  const zod = schemasToZod(schemas, (ref) => {
    const m = /^(?:[\w.-]+\.yaml)?#\/([\w]+)$/.exec(ref)
    if (!m || !(m[1]! in schemas)) throw new Error(`unsupported $ref ${ref} in ${SHARED_DIR}`)
    return { name: m[1]!, target: { module: 'local' } }
  })
  return tsModule(SHARED_MODULE, sharedFiles(), zod)
}

/**
 * Facts about events the spec states in `EventType` (every type, and which end a turn: its
 * `x-turn-ending`), in a module of their own with no zod import, so a browser bundle, or code on a
 * start-up path that checks nothing else (event file names), can use them for free.
 */
export function generateEventFacts(): GeneratedFile {
  const eventType = sharedSchemas().EventType as { enum?: string[]; 'x-turn-ending'?: string[] } | undefined
  const ending = eventType?.['x-turn-ending']
  if (!ending?.length || !eventType?.enum?.length) throw new Error('EventType has no enum or no x-turn-ending list')
  for (const t of ending)
    if (!eventType?.enum?.includes(t)) throw new Error(`x-turn-ending names ${t}, which is not an EventType`)
  const text = [
    header(sharedFiles()).trimEnd(),
    "import type { EventType } from './schemas.gen.ts'",
    '',
    "/** Every event type (EventType `enum`), in the spec's order. */",
    `export const EVENT_TYPE_NAMES = ${JSON.stringify(eventType.enum)} as const satisfies readonly EventType[]`,
    '/** The events that end a turn (EventType `x-turn-ending`): one closes every turn; after one the session is idle. */',
    `export const TURN_ENDING_EVENTS = ${JSON.stringify(ending)} as const satisfies readonly EventType[]`,
    'export type TurnEndingEvent = (typeof TURN_ENDING_EVENTS)[number]',
    '/** True when an event of this type ends its turn. */',
    'export const endsTurn = (type: string): type is TurnEndingEvent => (TURN_ENDING_EVENTS as readonly string[]).includes(type)',
    '',
  ].join('\n')
  return { path: EVENT_FACTS_MODULE, text }
}
