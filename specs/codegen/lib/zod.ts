/**
 * JSON Schema → zod 4 source, one `export const <Name>Schema` per named schema, through
 * json-schema-to-zod. That library resolves no `$ref`s, so every `$ref` is mapped here to an
 * identifier: a schema of the same module (emitted in dependency order, `z.lazy` on a cycle)
 * or a namespaced import from another generated module. `oneOf` is emitted as a union
 * (json-schema-to-zod would otherwise produce an untyped `z.any().superRefine`).
 */
import { readFileSync } from 'node:fs'
import { basename, dirname, relative } from 'node:path'
import { jsonSchemaToZod, parseSchema } from 'json-schema-to-zod'
import { byKey } from './order.ts'
import { abs, header } from './files.ts'
import { plainMarker } from './plain-checks.ts'

/** Where a `$ref` points: a schema name in this module, or in an imported one. */
export type RefTarget = { module: 'local' } | { module: string; importFrom: string }
export type Resolved = { name: string; target: RefTarget }
/** Maps a `$ref` string (as written in the source) to its target; throws on unknown refs. */
export type RefResolver = (ref: string) => Resolved

/** A valid TypeScript identifier built from a schema name. */
export const ident = (name: string): string => name.replace(/[^A-Za-z0-9_$]/g, '_')

/** The exported zod constant for a schema name. */
export const schemaIdent = (name: string): string => `${ident(name)}Schema`

function localDeps(schema: unknown, resolve: RefResolver, acc = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const v of schema) localDeps(v, resolve, acc)
  else if (schema && typeof schema === 'object') {
    const ref = (schema as Record<string, unknown>).$ref
    if (typeof ref === 'string') {
      const r = resolve(ref)
      if (r.target.module === 'local') acc.add(r.name)
    }
    for (const v of Object.values(schema)) localDeps(v, resolve, acc)
  }
  return acc
}

/** Topological order of named schemas by their local references (stable: input order). */
export function topoOrder(schemas: Record<string, unknown>, resolve: RefResolver): string[] {
  const order: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (n: string): void => {
    if (state.has(n)) return
    state.set(n, 'visiting')
    for (const d of localDeps(schemas[n], resolve)) if (d in schemas) visit(d)
    state.set(n, 'done')
    order.push(n)
  }
  for (const n of Object.keys(schemas)) visit(n)
  return order
}

export interface ZodModule {
  /** Source text of the `export const …Schema` declarations (no imports). */
  body: string
  /** Import namespaces used: namespace alias → module path. */
  imports: Map<string, string>
}

/** Namespace alias used for an imported generated module. */
const aliasOf = (importFrom: string): string =>
  ident(
    importFrom
      .replace(/^.*\//, '')
      .replace(/\.gen\.ts$/, '')
      .replace(/\.ts$/, ''),
  )

/**
 * Emit zod declarations for `schemas` (name → JSON Schema). `resolve` maps each `$ref`.
 * `exportTypes` adds `export type <Name> = z.infer<…>` after each constant.
 */
export function schemasToZod(
  schemas: Record<string, unknown>,
  resolve: RefResolver,
  opts: { exportTypes?: boolean } = {},
): ZodModule {
  const imports = new Map<string, string>()
  const emitted = new Set<string>()
  const exprFor = (ref: string): string => {
    const r = resolve(ref)
    if (r.target.module === 'local') {
      return emitted.has(r.name) ? `built(${schemaIdent(r.name)})` : `z.lazy(() => ${schemaIdent(r.name)})`
    }
    const { importFrom } = r.target as { importFrom: string }
    const alias = aliasOf(importFrom)
    imports.set(alias, importFrom)
    return `built(${alias}.${schemaIdent(r.name)})`
  }
  let body = ''
  for (const name of topoOrder(schemas, resolve)) {
    const code = jsonSchemaToZod(
      schemas[name] as never,
      {
        module: 'none',
        zodVersion: 4,
        withoutDescribes: true,
        parserOverride: (s: any, refs: any) => {
          if (typeof s.$ref === 'string') return exprFor(s.$ref)
          // `x-error-message: {pattern: …}` (a spec extension; every validator accepts `x-` keys)
          // is the refusal's text instead of the raw regex: json-schema-to-zod's `errorMessage`.
          if (s['x-error-message'] && !s.errorMessage) {
            const { 'x-error-message': errorMessage, ...rest } = s
            return parseSchema({ ...rest, errorMessage } as never, refs)
          }
          if (Array.isArray(s.oneOf)) {
            // `x-discriminator: <property>` (a spec extension every ecosystem's schema dialect
            // accepts; OpenAPI's `discriminator` object is not valid in AsyncAPI schemas) makes a
            // discriminated union: each value is checked against the variant its tag names, so
            // `{type: 'text_delta', metadata: {step: 1}}` fails.
            const { oneOf, 'x-discriminator': tag, discriminator: _d, ...rest } = s
            if (typeof tag === 'string' && Object.keys(rest).every((k) => k === 'description' || k === 'title')) {
              const variants = (oneOf as unknown[]).map((v) => parseSchema(v as never, refs))
              return `z.discriminatedUnion(${JSON.stringify(tag)}, [${variants.join(', ')}])`
            }
            return parseSchema({ ...rest, anyOf: oneOf }, refs)
          }
          return undefined
        },
      } as never,
    )
    // Built on first use (lazySchema): a process builds the validators it uses, when it uses them.
    // The marker becomes the schema's plain check (plain-checks.ts), once the module can be built.
    body += `export const ${schemaIdent(name)} = lazySchema(() => ${code.trim().replace(/;$/, '')}${plainMarker(schemaIdent(name))})\n`
    if (opts.exportTypes !== false) body += `export type ${ident(name)} = z.infer<typeof ${schemaIdent(name)}>\n`
    emitted.add(name)
  }
  return { body, imports }
}

/** The generated module of `lazySchema`, imported by every zod module. */
export const LAZY_MODULE = 'generated/lazy-schema.gen.ts'

/**
 * Render the head of the zod module at `path` (repo-relative): zod, the lazy-schema runtime, the
 * module's own namespace, the namespaces of other generated modules (sorted, deterministic), the
 * `extra` imports, then the decoder of the module's plain checks (plain-checks.ts): its own
 * stand-ins and those of the modules it imports.
 */
export function renderImports(path: string, imports: Map<string, string>, extra: string[] = []): string {
  let lazy = relative(dirname(path), LAZY_MODULE).split('\\').join('/')
  if (!lazy.startsWith('.')) lazy = `./${lazy}`
  const aliases = [...imports].sort(byKey)
  const lines = [
    "import * as z from 'zod'",
    `import { built, lazySchema, plainModule } from '${lazy}'`,
    `import * as own from './${basename(path)}'`,
    ...aliases.map(([alias, from]) => `import * as ${alias} from '${from}'`),
    ...extra,
  ]
  const names = aliases.map(([alias]) => alias)
  const decoder = `const plain = plainModule(own, ${names.length ? `{ ${names.join(', ')} }` : '{}'})`
  return `${lines.join('\n')}\n\n${decoder}\n\n`
}

/**
 * generated/lazy-schema.gen.ts: `lazySchema(build, plain)` stands for the schema `build()`
 * returns and builds it on first use (any property read: `parse`, `shape`, `_zod`), once; its
 * `parse` and `safeParse` run the schema's plain check first (plain-checks.ts). The module is the
 * runtime in specs/codegen/runtime/lazy-schema.ts, copied: generated code imports nothing
 * outside generated/.
 */
export function generateLazySchema(): { path: string; text: string } {
  const source = 'specs/codegen/runtime/lazy-schema.ts'
  return { path: LAZY_MODULE, text: `${header([source])}${readFileSync(abs(source), 'utf8')}` }
}
