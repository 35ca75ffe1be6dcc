/**
 * `make lint-specs`: validate every spec with its own ecosystem's validator, offline.
 * - OpenAPI 3.1 → `@redocly/openapi-core` lint (`minimal` + `struct` and `no-unresolved-refs` as errors);
 * - AsyncAPI 3.0 → `@asyncapi/parser` (error-severity diagnostics);
 * - OpenRPC → `@open-rpc/schema-utils-js` meta-schema validation, plus a check that every `$ref`
 *   resolves (local pointers, and relative file refs into `specs/schemas` / `specs/vendor`).
 * Every function returns a list of problem strings; an empty list means the spec is valid.
 * Run as a script it validates every spec and exits 1 on any problem (printed to stderr).
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createConfig, lint } from '@redocly/openapi-core'
import { Parser, fromFile } from '@asyncapi/parser'
import { validateOpenRPCDocument } from '@open-rpc/schema-utils-js'
import { parse } from 'yaml'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** The specs `make lint-specs` checks, repo-relative, with the validator each one takes. */
export const SPECS = {
  openapi: ['specs/openapi/chimera.openapi.yaml'],
  asyncapi: [
    'specs/asyncapi/sse.asyncapi.yaml',
    'specs/asyncapi/rpc.asyncapi.yaml',
    'specs/asyncapi/bridge.asyncapi.yaml',
    'specs/asyncapi/instances.asyncapi.yaml',
  ],
  openrpc: ['specs/openrpc/acp-v1.openrpc.json', 'specs/openrpc/acp-seed.openrpc.yaml'],
} as const

const display = (path: string): string => {
  const r = relative(ROOT, path)
  return r.startsWith('..') ? path : r.split('\\').join('/')
}

/** Parse a YAML or JSON file (YAML is a superset of JSON; `.json` goes through JSON.parse). */
function readDoc(path: string): unknown {
  const text = readFileSync(path, 'utf8')
  return path.endsWith('.json') ? JSON.parse(text) : parse(text)
}

/**
 * Lint an OpenAPI document with Redocly's `minimal` ruleset, `struct` and `no-unresolved-refs`
 * raised to errors. Error-severity problems become `file: ruleId: message @ pointer` strings.
 */
export async function lintOpenApi(path: string): Promise<string[]> {
  const file = resolve(path)
  if (!existsSync(file)) return [`${display(file)}: file not found`]
  const config = await createConfig({ extends: ['minimal'], rules: { struct: 'error', 'no-unresolved-refs': 'error' } })
  const problems = await lint({ ref: file, config })
  return problems
    .filter((p) => p.severity === 'error')
    .map((p) => {
      const loc = p.location[0]
      const where = loc ? `${display(loc.source.absoluteRef)}${loc.pointer ?? ''}` : display(file)
      return `${display(file)}: ${p.ruleId}: ${p.message} @ ${where}`
    })
}

/**
 * Parse and validate an AsyncAPI document with `@asyncapi/parser` (relative `$ref`s resolve
 * from the file's directory). Diagnostics of severity 0 (error) become strings; a parse that
 * yields no document is itself a problem.
 */
export async function validateAsyncApi(path: string): Promise<string[]> {
  const file = resolve(path)
  if (!existsSync(file)) return [`${display(file)}: file not found`]
  const { document, diagnostics } = await fromFile(new Parser(), file).parse()
  const problems = diagnostics
    .filter((d) => d.severity === 0)
    .map((d) => `${display(file)}: ${d.code}: ${d.message} @ /${d.path.join('/')}`)
  if (!document) problems.push(`${display(file)}: the parser produced no document`)
  return problems
}

/** Resolve a JSON pointer (`/a/b`, URI-fragment encoded) in `doc`; `undefined` when it does not exist. */
function resolvePointer(doc: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return doc
  if (!pointer.startsWith('/')) return undefined
  let cur: unknown = doc
  for (const raw of pointer.slice(1).split('/')) {
    let key: string
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    } catch {
      return undefined
    }
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined
    cur = (cur as Record<string, unknown>)[key]
  }
  return cur
}

/** Every `$ref` string in a parsed document, with the JSON pointer where it sits. */
function collectRefs(node: unknown, at = '', out: { ref: string; at: string }[] = []): { ref: string; at: string }[] {
  if (Array.isArray(node)) node.forEach((v, i) => collectRefs(v, `${at}/${i}`, out))
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === '$ref' && typeof v === 'string') out.push({ ref: v, at: at || '/' })
      else collectRefs(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out)
    }
  }
  return out
}

/**
 * Check that every `$ref` in `file` resolves: `#/…` against the file itself, `other.yaml#/…`
 * against that file (relative to `file`'s directory). Files reached through a ref are checked
 * the same way, once each.
 */
function checkRefs(
  file: string,
  problems: string[],
  cache = new Map<string, unknown>(),
  checked = new Set<string>(),
): void {
  if (checked.has(file)) return
  checked.add(file)
  const load = (f: string): unknown => {
    if (!cache.has(f)) cache.set(f, readDoc(f))
    return cache.get(f)
  }
  let doc: unknown
  try {
    doc = load(file)
  } catch (e) {
    problems.push(`${display(file)}: cannot be read: ${(e as Error).message}`)
    return
  }
  for (const { ref, at } of collectRefs(doc)) {
    const hash = ref.indexOf('#')
    const filePart = hash < 0 ? ref : ref.slice(0, hash)
    const pointer = hash < 0 ? '' : ref.slice(hash + 1)
    if (/^[a-z][a-z0-9+.-]*:/i.test(filePart)) {
      problems.push(`${display(file)}: $ref ${ref} @ ${at} is not a local or relative file ref`)
      continue
    }
    const target = filePart ? resolve(dirname(file), filePart) : file
    if (!existsSync(target)) {
      problems.push(`${display(file)}: $ref ${ref} @ ${at}: file ${display(target)} does not exist`)
      continue
    }
    let targetDoc: unknown
    try {
      targetDoc = load(target)
    } catch (e) {
      problems.push(`${display(file)}: $ref ${ref} @ ${at}: ${display(target)} cannot be read: ${(e as Error).message}`)
      continue
    }
    if (resolvePointer(targetDoc, pointer) === undefined) {
      problems.push(
        `${display(file)}: $ref ${ref} @ ${at} does not resolve (no ${pointer || '/'} in ${display(target)})`,
      )
    }
    if (target !== file) checkRefs(target, problems, cache, checked)
  }
}

/**
 * Validate an OpenRPC document (YAML or JSON) against the OpenRPC meta-schema with
 * `validateOpenRPCDocument`, then check that every `$ref` resolves: local `#/…` pointers and
 * relative file refs such as `../schemas/common.yaml#/ErrorBody` or
 * `../vendor/acp/schema.v1.json#/$defs/…` must name an existing key in that file.
 */
export async function validateOpenRpc(path: string): Promise<string[]> {
  const file = resolve(path)
  if (!existsSync(file)) return [`${display(file)}: file not found`]
  let doc: unknown
  try {
    doc = readDoc(file)
  } catch (e) {
    return [`${display(file)}: cannot be parsed: ${(e as Error).message}`]
  }
  const problems: string[] = []
  const result = validateOpenRPCDocument(doc as Parameters<typeof validateOpenRPCDocument>[0])
  if (result !== true) problems.push(`${display(file)}: OpenRPC meta-schema: ${result.message.trim()}`)
  checkRefs(file, problems)
  return problems
}

/** Validate every spec under `root`; returns every problem found. */
export async function validateAll(root = ROOT): Promise<string[]> {
  const at = (p: string): string => resolve(root, p)
  const results = await Promise.all([
    ...SPECS.openapi.map((p) => lintOpenApi(at(p))),
    ...SPECS.asyncapi.map((p) => validateAsyncApi(at(p))),
    ...SPECS.openrpc.map((p) => validateOpenRpc(at(p))),
  ])
  return results.flat()
}

async function main(): Promise<void> {
  const problems = await validateAll()
  if (problems.length) {
    process.stderr.write(`${problems.length} spec problem(s):\n  ${problems.join('\n  ')}\n`)
    process.exit(1)
  }
  const n = SPECS.openapi.length + SPECS.asyncapi.length + SPECS.openrpc.length
  process.stderr.write(`all ${n} specs valid\n`)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
