/**
 * Self-contained JSON copies of the AsyncAPI and OpenRPC documents, served beside
 * `/openapi.json` as `/asyncapi.json` and `/openrpc.json`:
 * - generated/sse/asyncapi.bundle.json (specs/asyncapi/sse.asyncapi.yaml)
 * - generated/acp/openrpc-v1.bundle.json, generated/acp/openrpc-seed.bundle.json
 *
 * Every `$ref` into another file (the shared `specs/schemas/*.yaml`, the vendored ACP schema) is
 * copied into `components.schemas` under `<file stem>_<name>` (stems keep names that two files
 * share apart, e.g. the ACP `SessionId` and ours) and pointed there; refs inside copied schemas
 * are rewritten the same way. Local refs stay as written.
 */
import { basename, dirname, join, posix } from 'node:path'
import { readSpec } from './lib/files.ts'
import type { GeneratedFile } from './lib/module.ts'
import { SSE_SPEC } from './gen-asyncapi.ts'
import { ACP_SEED_OPENRPC } from './gen-acp-seed.ts'
import { ACP_V1_OPENRPC } from './acp-v1-openrpc.ts'

const norm = (p: string): string => posix.normalize(p.split('\\').join('/'))
const stem = (file: string): string =>
  basename(file)
    .split('.')[0]!
    .replace(/[^A-Za-z0-9]/g, '_')

function at(doc: unknown, pointer: string, where: string): unknown {
  let node = doc as any
  for (const raw of pointer.split('/').filter(Boolean)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (node === null || typeof node !== 'object' || !(key in node)) throw new Error(`${where}: no ${pointer}`)
    node = node[key]
  }
  return node
}

export function bundleSpec(source: string): any {
  const doc = structuredClone(readSpec(source))
  const files = new Map<string, any>([[source, doc]])
  const added = new Map<string, unknown>()
  const load = (file: string): any => {
    if (!files.has(file)) files.set(file, readSpec(file))
    return files.get(file)
  }
  const walk = (node: unknown, file: string): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, file))
    if (node === null || typeof node !== 'object') return node
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        const [filePart, pointer = ''] = v.split('#')
        const target = filePart ? norm(join(dirname(file), filePart)) : file
        if (target === source) {
          out[k] = v
          continue
        }
        const key = `${stem(target)}_${pointer.split('/').filter(Boolean).pop()}`
        if (!added.has(key)) {
          added.set(key, null) // placeholder: cycles resolve to the same key
          added.set(key, walk(at(load(target), pointer, target), target))
        }
        out[k] = `#/components/schemas/${key}`
      } else out[k] = walk(v, file)
    }
    return out
  }
  const result = walk(doc, source) as any
  result.components ??= {}
  result.components.schemas ??= {}
  for (const key of [...added.keys()].sort()) {
    if (key in result.components.schemas) throw new Error(`${source}: bundled schema ${key} collides with a local one`)
    result.components.schemas[key] = added.get(key)
  }
  return result
}

const json = (path: string, source: string): GeneratedFile => ({
  path,
  text: `${JSON.stringify(bundleSpec(source), null, 2)}\n`,
})

export function generateBundles(): GeneratedFile[] {
  return [
    json('generated/sse/asyncapi.bundle.json', SSE_SPEC),
    json('generated/acp/openrpc-v1.bundle.json', ACP_V1_OPENRPC),
    json('generated/acp/openrpc-seed.bundle.json', ACP_SEED_OPENRPC),
  ]
}
