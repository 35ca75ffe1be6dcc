/**
 * specs/openapi/chimera.openapi.yaml →
 * - generated/http/openapi.gen.d.ts: `paths` / `components` types (openapi-typescript), for the
 *   typed client (openapi-fetch);
 * - generated/http/routes.gen.ts: zod validators for every schema, parameter set, body and JSON
 *   response, and the operation table (method, path, h3 route, auth tiers, validators).
 */
import openapiTS, { astToString } from 'openapi-typescript'
import { pathToFileURL } from 'node:url'
import { abs, header, readSpec } from './lib/files.ts'
import { derefLocal, pascal, stableJson, tsModule, type GeneratedFile } from './lib/module.ts'
import { makeResolver } from './lib/refs.ts'
import { schemaIdent, schemasToZod } from './lib/zod.ts'

export const OPENAPI_SPEC = 'specs/openapi/chimera.openapi.yaml'
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const

export async function generateHttpTypes(): Promise<GeneratedFile> {
  const ast = await openapiTS(pathToFileURL(abs(OPENAPI_SPEC)), { defaultNonNullable: false, silent: true })
  return { path: 'generated/http/openapi.gen.d.ts', text: header([OPENAPI_SPEC]) + astToString(ast) }
}

export function generateHttpRoutes(): GeneratedFile {
  const doc = readSpec(OPENAPI_SPEC)
  const out = 'generated/http/routes.gen.ts'
  const schemas: Record<string, unknown> = { ...doc.components.schemas }
  const add = (name: string, schema: unknown): string => {
    if (name in schemas) throw new Error(`${OPENAPI_SPEC}: generated schema name ${name} collides`)
    schemas[name] = schema
    return schemaIdent(name)
  }
  const rows: string[] = []
  for (const [path, rawItem] of Object.entries(doc.paths as Record<string, any>)) {
    const item = derefLocal(doc, rawItem)
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const id: string = op.operationId
      const base = pascal(id)
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => derefLocal(doc, p))
      const objectOf = (where: string, additional: boolean): string | null => {
        const ps = params.filter((p) => p.in === where)
        if (!ps.length) return null
        return add(`${base}${pascal(where)}`, {
          type: 'object',
          properties: Object.fromEntries(ps.map((p) => [p.name, p.schema ?? {}])),
          required: ps.filter((p) => p.required || where === 'path').map((p) => p.name),
          additionalProperties: additional,
        })
      }
      const pathV = objectOf('path', false)
      const queryV = objectOf('query', true)
      const headerNames = params.filter((p) => p.in === 'header').map((p) => String(p.name).toLowerCase())
      let body = 'null'
      if (op.requestBody) {
        const rb = derefLocal(doc, op.requestBody)
        const json = rb.content?.['application/json']
        if (!json) throw new Error(`${id}: request bodies must be application/json`)
        body = `{ contentType: "application/json", required: ${Boolean(rb.required)}, schema: ${add(`${base}Body`, json.schema ?? {})} }`
      }
      const responses: string[] = []
      for (const [status, rawRes] of Object.entries(op.responses as Record<string, any>)) {
        const res = derefLocal(doc, rawRes)
        const content = Object.entries((res.content ?? {}) as Record<string, any>).map(([type, c]) =>
          type === 'application/json'
            ? `${JSON.stringify(type)}: ${add(`${base}Response${status}`, c.schema ?? {})}`
            : `${JSON.stringify(type)}: null`,
        )
        responses.push(`${JSON.stringify(status)}: { ${content.join(', ')} }`)
      }
      const security: string[] = ((op.security ?? doc.security ?? []) as Record<string, unknown>[]).flatMap((s) =>
        Object.keys(s),
      )
      const meta = {
        operationId: id,
        method: method.toUpperCase(),
        path,
        route: path.replace(/\{([^}]+)\}/g, ':$1'),
        tag: (op.tags ?? [])[0] ?? null,
        security,
        headers: headerNames,
      }
      rows.push(
        `  ${JSON.stringify(id)}: { ${stableJson(meta).slice(1, -1)}, pathParams: ${pathV ?? 'null'}, query: ${queryV ?? 'null'}, body: ${body}, responses: { ${responses.join(', ')} } },`,
      )
    }
  }
  const zod = schemasToZod(schemas, makeResolver(OPENAPI_SPEC, out, '#/components/schemas/'))
  const schemes = Object.keys(doc.components.securitySchemes ?? {})
  const table = [
    `/** Every operation of ${OPENAPI_SPEC}, by operationId. \`security\` lists the bearer tiers that may call it ([] = open). */`,
    'export const httpOperations = {',
    ...rows,
    '} as const',
    'export type HttpOperationId = keyof typeof httpOperations',
    `export const HTTP_SECURITY_SCHEMES = ${JSON.stringify(schemes)} as const`,
    '',
    '/** What a validator outputs, or an empty object where the operation has no such part. */',
    'type Parsed<S> = S extends z.ZodType ? z.output<S> : Record<string, never>',
    '/** A body as validated: a required body is always there, an optional one may be absent. */',
    'type BodyOf<B> = B extends { required: true; schema: infer S } ? Parsed<S> : B extends { schema: infer S } ? Parsed<S> | undefined : undefined',
    '/** The validated input of one operation (path, query and body as its validators output them). */',
    'export interface OperationInputOf<P, Q, B> {',
    '  path: P',
    '  query: Q',
    '  body: B',
    '  req: Request',
    '}',
    'export type OperationInput<K extends HttpOperationId = HttpOperationId> = OperationInputOf<',
    "  Parsed<(typeof httpOperations)[K]['pathParams']>,",
    "  Parsed<(typeof httpOperations)[K]['query']>,",
    "  BodyOf<(typeof httpOperations)[K]['body']>",
    '>',
    '',
  ].join('\n')
  return tsModule(out, [OPENAPI_SPEC], zod, table)
}

/**
 * The self-contained OpenAPI document served at `GET /openapi.json`: the spec with the shared
 * `specs/schemas` refs bundled into `components` (Redocly's bundler, offline).
 */
export async function generateOpenApiBundle(): Promise<GeneratedFile> {
  const { bundle, createConfig } = await import('@redocly/openapi-core')
  const config = await createConfig({ extends: ['minimal'] })
  const result = await bundle({ ref: abs(OPENAPI_SPEC), config })
  const errors = result.problems.filter((p) => p.severity === 'error')
  if (errors.length) throw new Error(`${OPENAPI_SPEC}: bundling failed: ${errors.map((p) => p.message).join('; ')}`)
  return { path: 'generated/http/openapi.bundle.json', text: `${JSON.stringify(result.bundle.parsed, null, 2)}\n` }
}
