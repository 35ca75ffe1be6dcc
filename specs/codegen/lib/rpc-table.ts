/**
 * OpenRPC document → zod validators for every method's params and result, plus a method table
 * (`<prefix>Methods`): name → direction, kind, params, result, error codes, dialects.
 * Params come from `x-params-schema` when the method has one (the whole params object, as ACP
 * defines it), else from the by-name content descriptors.
 */
import { makeResolver } from './refs.ts'
import { pascal, pointer, stableJson } from './module.ts'
import { schemaIdent, schemasToZod, type ZodModule } from './zod.ts'

export function methodTable(
  doc: any,
  source: string,
  outFile: string,
  prefix: string,
): { zod: ZodModule; table: string } {
  const schemas: Record<string, unknown> = { ...(doc.components?.schemas ?? {}) }
  // Synthetic per-method names; `Method` is inserted when a component already has the name.
  const add = (base: string, part: string, schema: unknown): string => {
    const name = [`${base}${part}`, `${base}Method${part}`].find((n) => !(n in schemas))
    if (!name) throw new Error(`${source}: generated schema name ${base}${part} collides`)
    schemas[name] = schema
    return name
  }
  const rows: string[] = []
  for (const m of doc.methods as any[]) {
    const base = pascal(m.name)
    // A param may be a `$ref` to `components/contentDescriptors`.
    const descriptors = ((m.params ?? []) as any[]).map((p) => (p.$ref ? pointer(doc, p.$ref) : p))
    const paramsSchema = m['x-params-schema'] ?? {
      type: 'object',
      properties: Object.fromEntries(descriptors.map((p) => [p.name, p.schema])),
      required: descriptors.filter((p) => p.required).map((p) => p.name),
      additionalProperties: m['x-params-additional'] ?? true,
    }
    const params = add(base, 'Params', paramsSchema)
    const result = m.result ? add(base, 'Result', m.result.schema) : undefined
    const errors = [
      ...new Set(((m.errors ?? []) as any[]).map((e) => (e.$ref ? pointer(doc, e.$ref) : e).code as number)),
    ]
    const meta = {
      direction: m['x-direction'],
      kind: m['x-kind'] ?? (m.result ? 'request' : 'notification'),
      errors,
      ...(m['x-dialects'] ? { dialects: m['x-dialects'] } : {}),
    }
    if (!meta.direction) throw new Error(`${source}: method ${m.name} lacks x-direction`)
    const metaJson = stableJson(meta).slice(1, -1)
    rows.push(
      `  ${JSON.stringify(m.name)}: { ${metaJson}, params: ${schemaIdent(params)}, result: ${result ? schemaIdent(result) : 'null'} },`,
    )
  }
  const zod = schemasToZod(schemas, makeResolver(source, outFile, '#/components/schemas/'))
  const table = [
    `/** Every method of ${source}: direction, kind, validators and error codes. */`,
    `export const ${prefix}Methods = {`,
    ...rows,
    '} as const',
    `export type ${pascal(prefix)}Method = keyof typeof ${prefix}Methods`,
    '',
  ].join('\n')
  return { zod, table }
}
