/**
 * specs/tools/tools.yaml → generated/tools/tools.gen.ts: an argument validator per tool and the
 * `toolSpecs` table (description, default permission, the JSON Schema served by `GET /tools`).
 */
import { readSpec } from './lib/files.ts'
import { stableJson, tsModule, type GeneratedFile } from './lib/module.ts'
import { makeResolver } from './lib/refs.ts'
import { schemaIdent, schemasToZod } from './lib/zod.ts'

export const TOOLS_SPEC = 'specs/tools/tools.yaml'

export function generateTools(): GeneratedFile {
  const doc = readSpec(TOOLS_SPEC)
  const out = 'generated/tools/tools.gen.ts'
  const entries = Object.entries(doc.tools as Record<string, any>)
  const schemas = Object.fromEntries(entries.map(([name, t]) => [`${name}Input`, t.input_schema]))
  const zod = schemasToZod(schemas, makeResolver(TOOLS_SPEC, out, '#/components/schemas/'))
  const rows = entries.map(([name, t]) => {
    if (t.permission !== 'allow' && t.permission !== 'ask' && t.permission !== 'deny')
      throw new Error(`${TOOLS_SPEC}: ${name} needs permission allow|ask|deny`)
    return `  ${JSON.stringify(name)}: { description: ${JSON.stringify(t.description)}, permission: ${JSON.stringify(t.permission)}, inputSchema: ${stableJson(t.input_schema)}, params: ${schemaIdent(`${name}Input`)} },`
  })
  const table = [
    `/** The built-in tools of ${TOOLS_SPEC}. */`,
    'export const toolSpecs = {',
    ...rows,
    '} as const',
    'export type ToolName = keyof typeof toolSpecs',
    '',
  ].join('\n')
  return tsModule(out, [TOOLS_SPEC], zod, table)
}
