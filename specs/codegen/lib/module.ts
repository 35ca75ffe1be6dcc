/** Assembling one generated TypeScript module from zod declarations and tables. */
import { header } from './files.ts'
import { renderImports, type ZodModule } from './zod.ts'
import { byKey } from './order.ts'

export interface GeneratedFile {
  path: string
  text: string
}

/** A generated module: header, imports, zod declarations, then extra source (tables). */
export function tsModule(
  path: string,
  sources: string[],
  zod: ZodModule,
  extra = '',
  extraImports: string[] = [],
): GeneratedFile {
  const imports = renderImports(path, zod.imports, extraImports)
  return { path, text: `${header(sources)}${imports}${zod.body}${extra ? `\n${extra}` : ''}` }
}

/** JSON.stringify with sorted object keys, for deterministic table literals. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(byKey)) : v,
  )
}

/** `Foo.bar-baz` → `FooBarBaz`. */
export const pascal = (s: string): string =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')

/** Resolve a local JSON pointer (`#/a/b`) in a document. */
export function pointer(doc: any, ref: string): any {
  if (!ref.startsWith('#/')) throw new Error(`not a local ref: ${ref}`)
  let cur = doc
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    cur = cur?.[key]
    if (cur === undefined) throw new Error(`unresolved ref ${ref}`)
  }
  return cur
}

/** Follow local `$ref`s until a non-reference object is reached. */
export function derefLocal(doc: any, obj: any): any {
  let cur = obj
  for (let i = 0; cur && typeof cur.$ref === 'string' && cur.$ref.startsWith('#/'); i++) {
    if (i > 20) throw new Error(`ref loop at ${obj.$ref}`)
    cur = pointer(doc, cur.$ref)
  }
  return cur
}
