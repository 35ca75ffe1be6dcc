/**
 * `$ref` resolution for the generators. Three kinds of schema home exist:
 * - shared shapes, `specs/schemas/*.yaml` (top-level keys) → generated/schemas.gen.ts;
 * - the vendored ACP v1 JSON Schema, `specs/vendor/acp/schema.v1.json#/$defs/<Name>` →
 *   generated/acp/v1-schema.gen.ts;
 * - a spec's own `#/components/schemas/<Name>` → the module being generated.
 */
import { dirname, join, posix, relative } from 'node:path'
import type { RefResolver } from './zod.ts'

export const SHARED_DIR = 'specs/schemas'
export const SHARED_MODULE = 'generated/schemas.gen.ts'
export const ACP_VENDOR = 'specs/vendor/acp/schema.v1.json'
export const ACP_MODULE = 'generated/acp/v1-schema.gen.ts'

/** Import specifier of generated module `target` as seen from generated file `from`. */
export function importPath(from: string, target: string): string {
  const r = relative(dirname(from), target).split('\\').join('/')
  return r.startsWith('.') ? r : `./${r}`
}

/**
 * A resolver for refs written in spec file `source`, for code emitted into `outFile`.
 * `localPrefix` is the pointer prefix of schemas emitted in `outFile` itself.
 */
export function makeResolver(source: string, outFile: string, localPrefix: string): RefResolver {
  const prefix = localPrefix.replace(/^#/, '')
  const prefixDepth = prefix.split('/').filter(Boolean).length
  return (ref: string) => {
    const [filePart, pointer = ''] = ref.split('#')
    const file = filePart ? posix.normalize(join(dirname(source), filePart).split('\\').join('/')) : source
    const home = homeOf(file, pointer)
    if (!home) throw new Error(`unsupported $ref ${ref} in ${source}`)
    if (home.module === outFile) return { name: home.name, target: { module: 'local' } }
    return { name: home.name, target: { module: home.module, importFrom: importPath(outFile, home.module) } }
  }

  function homeOf(file: string, pointer: string): { module: string; name: string } | undefined {
    const seg = pointer.split('/').filter(Boolean)
    if (file.startsWith(`${SHARED_DIR}/`) && seg.length === 1) return { module: SHARED_MODULE, name: seg[0]! }
    if (file === ACP_VENDOR && seg[0] === '$defs' && seg.length === 2) return { module: ACP_MODULE, name: seg[1]! }
    if (file === source && pointer.startsWith(prefix) && seg.length === prefixDepth + 1) {
      return { module: outFile, name: seg[seg.length - 1]! }
    }
    return undefined
  }
}
