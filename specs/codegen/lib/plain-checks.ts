/**
 * The plain checks in front of the generated zod schemas (specs/codegen/runtime/lazy-schema.ts):
 * each schema's description as data, derived from the zod schema itself once built, so it says
 * what zod does (its property rules, defaults, unions) and not what the JSON Schema meant.
 *
 * The generated modules are first rendered with a marker after each schema's builder; they are
 * written to a temporary directory, imported, and every schema is built and walked; the marker is
 * then replaced by the schema's description (or dropped where the root itself is not covered).
 * A construct the plain check does not cover (transforms, refinements, string formats other than
 * a pattern, coercion, `exactOptional`, defaults given as functions, checks with conditions of
 * their own, ...) becomes `0` there: zod decides.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { abs } from './files.ts'
import type { GeneratedFile } from './module.ts'

/** Written after each schema's builder by schemasToZod; replaced here. */
export const plainMarker = (constName: string): string => `/*plain:${constName}*/`
const MARKER = /\/\*plain:(\w+)\*\/\)/g
const HAS_MARKER = /\/\*plain:\w+\*\/\)/
const ALIAS = /^export const (\w+) = lazySchema\(\(\) => built\([\w.]+\)\/\*plain:\w+\*\/\)$/gm

/** A built zod schema, walked through its internal definition (`_zod.def`). */
type Inst = any

const absence = (v: unknown): 0 | 1 | 2 => (v === 'defaulted' ? 2 : v === 'optional' ? 1 : 0)
const optout = (v: unknown): 0 | 1 => (v === 'optional' ? 1 : 0)

/** A literal value as JSON carries it (`undefined` is flagged apart); false when it cannot. */
const jsonable = (v: unknown): boolean =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))

/** A value that survives JSON unchanged (a default), or undefined. */
function jsonValue(v: unknown): unknown {
  if (v === undefined || typeof v === 'function') return undefined
  const text = JSON.stringify(v)
  if (text === undefined) return undefined
  return isDeepStrictEqual(JSON.parse(text), v) && !text.includes('__proto__') ? v : undefined
}

/** A node of the JSON form (`PlainWire`, specs/codegen/runtime/lazy-schema.ts). */
type Wire = unknown

/** The checks of a schema in the JSON form, or undefined when one is not covered. */
function checks(inst: Inst, allowed: readonly string[]): Wire[] | undefined {
  const all: Inst[] = [...(inst._zod.traits?.has('$ZodCheck') ? [inst] : []), ...(inst._zod.def.checks ?? [])]
  const out: Wire[] = []
  for (const c of all) {
    const d = c._zod.def
    if (!allowed.includes(d.check)) return undefined
    // A condition of its own on when the check runs (a length check's default one aside).
    if (d.when && !(LENGTHS.includes(d.check) && d.when.name === '_whenHasLength')) return undefined
    switch (d.check) {
      case 'min_length':
        out.push(['min', d.minimum])
        break
      case 'max_length':
        out.push(['max', d.maximum])
        break
      case 'length_equals':
        out.push(['len', d.length])
        break
      case 'string_format':
        // Formats zod checks by their pattern alone (a URL or an e-mail address has more to it).
        if (!PATTERN_FORMATS.includes(d.format) || !(d.pattern instanceof RegExp)) return undefined
        out.push(['regex', d.pattern.source, d.pattern.flags])
        break
      case 'greater_than':
      case 'less_than':
        if (typeof d.value !== 'number' || !Number.isFinite(d.value)) return undefined
        out.push([d.check === 'greater_than' ? 'gt' : 'lt', d.value, d.inclusive === true])
        break
      case 'number_format':
        if (d.format !== 'safeint') return undefined
        out.push(['safeint'])
        break
      default:
        return undefined
    }
  }
  return out
}

const NO_CHECKS: readonly string[] = []
const PATTERN_FORMATS: readonly string[] = ['regex', 'datetime']
const LENGTHS = ['min_length', 'max_length', 'length_equals']

/**
 * The description of `root` in its JSON form. `refOf` names a schema the module can reach (its
 * own stand-in, or an imported module's as `alias.Name`), referred to instead of walked again.
 */
export function plainWire(root: Inst, refOf: (inst: Inst) => string | undefined): Wire {
  const walking = new Set<Inst>()
  const node = (inst: Inst, isRoot = false): Wire => {
    if (!isRoot) {
      const ref = refOf(inst)
      if (ref) return ['ref', ref]
    }
    if (walking.has(inst)) return 0
    walking.add(inst)
    try {
      return describe(inst)
    } finally {
      walking.delete(inst)
    }
  }
  const prop = (el: Inst): Wire => [node(el), absence(el._zod.optin), optout(el._zod.optout)]
  const describe = (inst: Inst): Wire => {
    const d = inst._zod.def
    // Only strings, numbers and arrays carry checks here.
    if (!['string', 'number', 'array'].includes(d.type) && checks(inst, NO_CHECKS) === undefined) return 0
    switch (d.type) {
      case 'any':
      case 'unknown':
        return 1
      case 'never':
        return ['never']
      case 'string': {
        const c = checks(inst, [...LENGTHS, 'string_format'])
        return d.coerce || c === undefined ? 0 : ['string', c]
      }
      case 'number': {
        const c = checks(inst, ['greater_than', 'less_than', 'number_format'])
        return d.coerce || c === undefined ? 0 : ['number', c]
      }
      case 'boolean':
        return d.coerce ? 0 : ['boolean']
      case 'null':
      case 'literal':
      case 'enum': {
        const values = [...(inst._zod.values ?? [])]
        const defined = values.filter((v) => v !== undefined)
        if (!values.length || !defined.every(jsonable)) return 0
        return defined.length === values.length ? ['values', defined] : ['values', defined, 1]
      }
      case 'array': {
        const c = checks(inst, LENGTHS)
        return c === undefined ? 0 : ['array', node(d.element), c]
      }
      case 'object': {
        if (Object.getOwnPropertySymbols(d.shape).length || Object.hasOwn(d.shape, '__proto__')) return 0
        const props = Object.fromEntries(Object.keys(d.shape).map((key) => [key, prop(d.shape[key])]))
        return ['object', props, d.catchall ? prop(d.catchall) : null]
      }
      case 'optional':
        // `exactOptional` shares the type and refuses an explicit undefined.
        if (!inst._zod.traits?.has('$ZodOptional') || inst._zod.traits.has('$ZodExactOptional')) return 0
        return ['optional', node(d.innerType), absence(d.innerType._zod.optin)]
      case 'nullable':
        return ['nullable', node(d.innerType)]
      case 'default': {
        // A default given as a function gives a new value each time: zod decides.
        const v = jsonValue(d.defaultValue)
        const again = jsonValue(d.defaultValue)
        return v === undefined || JSON.stringify(v) !== JSON.stringify(again) ? 0 : ['default', node(d.innerType), v]
      }
      case 'union': {
        if (typeof d.discriminator === 'string') {
          if (d.unionFallback) return 0
          // zod's discriminatorMap: each value of the tag names its option; `undefined` named twice names none.
          const map = new Map<unknown, Inst | null>()
          for (const option of d.options) {
            const values: Set<unknown> | undefined = option._zod.propValues?.[d.discriminator]
            if (!values?.size) return 0
            for (const v of values) {
              // zod throws on a value two options name (undefined aside): it decides.
              if (map.has(v) && v !== undefined) return 0
              map.set(v, map.has(v) ? null : option)
            }
          }
          const entries: Wire[] = []
          let absent: Wire[] | undefined
          for (const [v, option] of map) {
            const target = option === null ? null : node(option)
            if (v === undefined) absent = [target]
            else if (jsonable(v)) entries.push([v, target])
            else return 0
          }
          return absent
            ? ['discriminated', d.discriminator, entries, absent]
            : ['discriminated', d.discriminator, entries]
        }
        if (d.inclusive === false) return 0
        return ['union', d.options.map((o: Inst) => node(o))]
      }
      case 'intersection':
        return ['and', node(d.left), node(d.right)]
      case 'lazy':
        return node(inst._zod.innerType)
      case 'record': {
        const k = d.keyType
        const plainKey =
          k._zod.def.type === 'string' && !k._zod.def.coerce && !k._zod.values && checks(k, NO_CHECKS) !== undefined
        return plainKey && !d.mode && !d.partial ? ['record', node(d.valueType)] : 0
      }
      default:
        return 0
    }
  }
  return node(root, true)
}

/** `text` as a single-quoted JS string (JSON's own double quotes then need no escape). */
const quoted = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

/** The import aliases of a generated module (`import * as alias from './x.gen.ts'`), by module path. */
function importAliases(file: GeneratedFile): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of file.text.matchAll(/^import \* as (\w+) from '(\.[^']+)'$/gm))
    out.set(posix.normalize(posix.join(posix.dirname(file.path), m[2]!)), m[1]!)
  return out
}

/**
 * Replace each marker of the rendered `files` by its schema's plain description, in its JSON
 * form (a string literal costs the parser far less than the same data as code; the runtime
 * decodes one schema's on its first check). The generated
 * TypeScript modules are written to a temporary directory (their `zod` resolved from this
 * checkout's node_modules), imported and walked.
 */
export async function withPlainChecks(files: GeneratedFile[]): Promise<GeneratedFile[]> {
  const marked = files.filter((f) => f.path.endsWith('.ts') && HAS_MARKER.test(f.text))
  if (!marked.length) return files
  const dir = mkdtempSync(join(tmpdir(), 'chimera-codegen-'))
  try {
    symlinkSync(abs('node_modules'), join(dir, 'node_modules'), 'dir')
    for (const f of files.filter((f) => f.path.endsWith('.ts'))) {
      mkdirSync(dirname(join(dir, f.path)), { recursive: true })
      writeFileSync(join(dir, f.path), f.text)
    }
    const lazy = files.find((f) => /lazy-schema\.gen\.ts$/.test(f.path))
    if (!lazy) throw new Error('withPlainChecks: the lazy-schema module is not among the files')
    const { built } = (await import(pathToFileURL(join(dir, lazy.path)).href)) as { built: (s: unknown) => Inst }
    /** Every generated schema, built: instance → where it lives. */
    const owner = new Map<Inst, { path: string; name: string }>()
    const modules = new Map<string, Record<string, unknown>>()
    for (const f of marked) {
      const m = (await import(pathToFileURL(join(dir, f.path)).href)) as Record<string, unknown>
      modules.set(f.path, m)
      // A schema declared as another one (`X = lazySchema(() => built(Y))`) is not its owner.
      const aliases = new Set([...f.text.matchAll(ALIAS)].map((a) => a[1]!))
      for (const [name, v] of Object.entries(m))
        if (name.endsWith('Schema') && v && typeof v === 'object' && !aliases.has(name))
          owner.set(built(v), { path: f.path, name })
    }
    return files.map((f) => {
      const m = modules.get(f.path)
      if (!m) return f
      const aliases = importAliases(f)
      const refOf = (inst: Inst): string | undefined => {
        const o = owner.get(inst)
        if (!o) return undefined
        if (o.path === f.path) return o.name
        const alias = aliases.get(o.path)
        return alias && `${alias}.${o.name}`
      }
      const text = f.text.replace(MARKER, (_all, name: string) => {
        const inst = built(m[name])
        // A schema that is another one under a second name refers to it.
        const o = owner.get(inst)
        const alias = o && (o.path !== f.path || o.name !== name) ? refOf(inst) : undefined
        const wire = alias ? ['ref', alias] : plainWire(inst, refOf)
        return wire === 0 ? ')' : `, () => plain(${quoted(JSON.stringify(wire))}))`
      })
      return { ...f, text }
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
