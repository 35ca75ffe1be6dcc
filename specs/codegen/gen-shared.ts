/** specs/schemas/*.yaml → generated/schemas.gen.ts (one zod module for all shared shapes). */
import { readdirSync } from 'node:fs'
import { abs, readSpec } from './lib/files.ts'
import { tsModule, type GeneratedFile } from './lib/module.ts'
import { SHARED_DIR, SHARED_MODULE } from './lib/refs.ts'
import { schemasToZod } from './lib/zod.ts'

export function sharedFiles(): string[] {
  return readdirSync(abs(SHARED_DIR)).filter((f) => f.endsWith('.yaml')).sort().map((f) => `${SHARED_DIR}/${f}`)
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
