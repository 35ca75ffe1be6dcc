/**
 * A generated validator built on first use, with a plain check in front of it.
 *
 * `lazySchema(build, plain)` stands for the zod schema `build()` returns (same type, same
 * behaviour) and builds it the first time any of its properties is read. `plain`, when the
 * generator could derive one, describes the same schema as data (`PlainNode`, derived from the
 * built zod schema itself by specs/codegen/lib/plain-checks.ts): `parse` and `safeParse` first
 * run that description over the input, and return what it produced when it accepted the input.
 * Anything else (an input it refuses, a construct it does not cover) goes to zod, so every
 * refusal and its issues are zod's own. The description accepts only what zod accepts, with the
 * value zod would return (one exception, in `intersection`: where zod throws, the plain check
 * refuses): a process that checks valid input builds no zod schema at all. A schema checked more
 * than HOT times goes to zod from then on, whose compiled check is faster once built.
 *
 * With CHIMERA_PLAIN_CHECK_VERIFY=1 every value the plain check accepts is parsed by zod as
 * well, and a difference throws (the test suite runs so).
 */
const BUILD_MS = Symbol.for('chimera.validatorBuildMs')
const timing = globalThis as { [BUILD_MS]?: number }
const REAL = Symbol('lazySchema.built')
/** The stand-in's plain description (`0` when it has none), read without building the schema. */
const PLAIN = Symbol('lazySchema.plain')
let depth = 0

/** Check kinds the plain check runs after its type test (zod's checks of the same names). */
export type PlainCheck =
  | readonly ['min', number]
  | readonly ['max', number]
  | readonly ['len', number]
  | readonly ['regex', RegExp]
  | readonly ['gt', number, boolean]
  | readonly ['lt', number, boolean]
  | readonly ['safeint']

/** How a property takes absence (zod's `optin` / `optout`): 0 none, 1 optional, 2 defaulted. */
export type PlainProp = readonly [node: PlainNode, optin: 0 | 1 | 2, optout: 0 | 1]

/**
 * A schema as data. `0`: not covered (zod decides); `1`: any value, as it is.
 * Objects: their properties in zod's order and the catch-all (`null`: unknown keys dropped).
 */
export type PlainNode =
  | 0
  | 1
  | readonly ['never']
  | readonly ['string', readonly PlainCheck[]]
  | readonly ['number', readonly PlainCheck[]]
  | readonly ['boolean']
  | readonly ['values', readonly unknown[]]
  | readonly ['array', PlainNode, readonly PlainCheck[]]
  | readonly ['object', Readonly<Record<string, PlainProp>>, PlainProp | null]
  | readonly ['optional', PlainNode, innerOptin: 0 | 1 | 2]
  | readonly ['nullable', PlainNode]
  | readonly ['default', PlainNode, () => unknown]
  | readonly ['union', readonly PlainNode[]]
  | readonly ['discriminated', string, ReadonlyMap<unknown, PlainNode | null>]
  | readonly ['record', PlainNode]
  | readonly ['and', PlainNode, PlainNode]
  | readonly ['ref', object]

/** The input is refused (zod refuses it too). */
const FAIL: unique symbol = Symbol('plain.fail')
/** The description cannot decide (zod decides). */
const BAIL: unique symbol = Symbol('plain.bail')
type Outcome = unknown

/**
 * The schema a `lazySchema` stands for, built now (any other value as it is): a schema that
 * embeds another holds the built one, so checking it goes through no stand-in.
 */
export function built<T>(schema: T): T {
  return (schema as { [REAL]?: T })[REAL] ?? schema
}

/**
 * `schema.shape[key]` of a generated object schema, without building it where its plain check
 * says the member is another generated schema (which is then returned, as its stand-in).
 */
export function shapeMember<S extends { shape: object }, K extends keyof S['shape'] & string>(
  schema: S,
  key: K,
): S['shape'][K] {
  const n = plainNode(schema)
  if (Array.isArray(n) && n[0] === 'object' && Object.hasOwn(n[1], key)) {
    const member = (n[1] as Record<string, PlainProp>)[key]![0]
    if (Array.isArray(member) && member[0] === 'ref') return member[1] as S['shape'][K]
  }
  return (schema.shape as S['shape'])[key]
}

/**
 * The plain check of a generated object schema with its member `key` taking any value, as zod's
 * `schema.extend({ [key]: z.unknown() })` does (the key stays where it was, and required);
 * `0` (zod decides) when the schema has no plain check of an object.
 */
export function plainWithAnyMember(schema: object, key: string): PlainNode {
  const n = plainNode(schema)
  if (!Array.isArray(n) || n[0] !== 'object' || !Object.hasOwn(n[1], key)) return 0
  const [, shape, rest] = n as readonly ['object', Readonly<Record<string, PlainProp>>, PlainProp | null]
  return ['object', { ...shape, [key]: [1, 0, 0] }, rest]
}

/** The plain description of a generated schema's stand-in (`0` for none). */
export function plainNode(schema: object): PlainNode {
  return (schema as { [PLAIN]?: PlainNode })[PLAIN] ?? 0
}

/**
 * What the plain check of a generated schema alone says of `input`: the value it accepts it as,
 * or a refusal (`covered`: zod refuses it too; otherwise the check does not decide). For tests.
 */
export function plainResult(
  schema: object,
  input: unknown,
): { ok: true; value: unknown } | { ok: false; covered: boolean } {
  const r = run(plainNode(schema), input)
  return r === FAIL ? { ok: false, covered: true } : r === BAIL ? { ok: false, covered: false } : { ok: true, value: r }
}

/**
 * A plain description as the generated modules carry it: JSON, in a string (which costs the
 * parser far less than the same data as code). Like `PlainNode`, with a pattern as its source and
 * flags, a default as its value, `undefined` among literal values or discriminator values flagged
 * apart, and a reference as the name of a generated schema (`alias.Name` for an imported module's).
 */
type PlainWire = 0 | 1 | readonly [string, ...unknown[]]

/**
 * The decoder of one generated module's descriptions: `own` is the module's namespace (its
 * stand-ins), `imported` the namespaces of the generated modules it imports, by alias.
 */
export function plainModule(own: object, imported: Record<string, object>): (json: string) => PlainNode {
  const ref = (name: string): object => {
    const dot = name.indexOf('.')
    const target = (dot < 0 ? own : imported[name.slice(0, dot)]) as Record<string, object> | undefined
    const schema = target?.[dot < 0 ? name : name.slice(dot + 1)]
    if (!schema) throw new Error(`plain check: no generated schema ${name}`)
    return schema
  }
  return (json) => decode(JSON.parse(json) as PlainWire, ref)
}

function decode(w: PlainWire, ref: (name: string) => object): PlainNode {
  if (w === 0 || w === 1) return w
  const node = (x: unknown): PlainNode => decode(x as PlainWire, ref)
  const checks = (cs: unknown): PlainCheck[] =>
    (cs as unknown[][]).map((c) =>
      c[0] === 'regex'
        ? (['regex', new RegExp(c[1] as string, c[2] as string)] as const)
        : (c as unknown as PlainCheck),
    )
  const prop = (p: unknown): PlainProp => {
    const [n, optin, optout] = p as [unknown, 0 | 1 | 2, 0 | 1]
    return [node(n), optin, optout]
  }
  switch (w[0]) {
    case 'never':
    case 'boolean':
      return [w[0]]
    case 'string':
    case 'number':
      return [w[0], checks(w[1])]
    case 'values':
      return ['values', w[2] ? [...(w[1] as unknown[]), undefined] : (w[1] as unknown[])]
    case 'array':
      return ['array', node(w[1]), checks(w[2])]
    case 'object': {
      const shape: Record<string, PlainProp> = {}
      for (const [k, p] of Object.entries(w[1] as Record<string, unknown>)) shape[k] = prop(p)
      return ['object', shape, w[2] === null ? null : prop(w[2])]
    }
    case 'optional':
      return ['optional', node(w[1]), w[2] as 0 | 1 | 2]
    case 'nullable':
      return ['nullable', node(w[1])]
    case 'default': {
      // A fresh copy each time: a caller that changes what it was given changes no later parse.
      const value = w[2]
      return ['default', node(w[1]), () => structuredClone(value)]
    }
    case 'union':
      return ['union', (w[1] as unknown[]).map(node)]
    case 'discriminated': {
      const map = new Map<unknown, PlainNode | null>()
      for (const [v, n] of w[2] as [unknown, unknown][]) map.set(v, n === null ? null : node(n))
      const absent = w[3] as [unknown] | undefined
      if (absent) map.set(undefined, absent[0] === null ? null : node(absent[0]))
      return ['discriminated', w[1] as string, map]
    }
    case 'record':
      return ['record', node(w[1])]
    case 'and':
      return ['and', node(w[1]), node(w[2])]
    case 'ref':
      return ['ref', ref(w[1] as string)]
  }
  throw new Error(`plain check: unknown node ${JSON.stringify(w[0])}`)
}

interface SafeResult {
  success: boolean
  data?: unknown
}
interface Parser {
  parse(value: unknown, params?: unknown): unknown
  safeParse(value: unknown, params?: unknown): SafeResult
}

/** How many checks of one schema the plain check runs before zod's own (built, compiled) takes over. */
const HOT = 1000

/** Read once, when this module loads (an environment variable costs a native call per read). */
let verifying =
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.CHIMERA_PLAIN_CHECK_VERIFY === '1'

/** Turn the verification on or off in this process (tests; CHIMERA_PLAIN_CHECK_VERIFY=1 sets it at start). */
export function verifyPlainChecks(on: boolean): void {
  verifying = on
}

export function lazySchema<T extends object>(build: () => T, plain?: () => PlainNode): T {
  let value: T | undefined
  let node: PlainNode | undefined
  const real = (): T => {
    if (value) return value
    const t0 = depth++ === 0 ? performance.now() : 0
    try {
      value = build()
    } finally {
      if (--depth === 0) timing[BUILD_MS] = (timing[BUILD_MS] ?? 0) + performance.now() - t0
    }
    return value
  }
  const described = (): PlainNode => {
    if (node === undefined) {
      try {
        node = plain ? plain() : 0
      } catch {
        // A description that cannot be read (a generator fault): zod checks everything.
        node = 0
      }
    }
    return node
  }
  const zod = (): Parser => real() as unknown as Parser
  /** The plain check's result for `input`: its value, or FAIL/BAIL (zod decides). */
  let checks = 0
  const check = (input: unknown, params: unknown): Outcome => {
    // Parse options (a custom error map, async checks) are zod's business. So is a schema checked
    // often: its compiled check is faster once built (the plain check spares start-up the build).
    if (params !== undefined || ++checks > HOT) return BAIL
    let out: Outcome
    try {
      out = run(described(), input)
    } catch {
      // Nesting deeper than the stack: zod may still take it.
      return BAIL
    }
    if (out !== FAIL && out !== BAIL && verifying) verify(zod(), input, out)
    return out
  }
  const parse = (input: unknown, params?: unknown): unknown => {
    const out = check(input, params)
    return out === FAIL || out === BAIL ? zod().parse(input, params) : out
  }
  const safeParse = (input: unknown, params?: unknown): SafeResult => {
    const out = check(input, params)
    return out === FAIL || out === BAIL ? zod().safeParse(input, params) : { success: true, data: out }
  }
  return new Proxy({} as T, {
    get: (_t, key) => {
      if (key === REAL) return real()
      if (key === PLAIN) return described()
      if (plain && key === 'parse') return parse
      if (plain && key === 'safeParse') return safeParse
      return Reflect.get(real(), key)
    },
    has: (_t, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    // Reported configurable: the stand-in itself has none of the schema's own properties.
    getOwnPropertyDescriptor: (_t, key) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), key)
      return d && { ...d, configurable: true }
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    set: (_t, key, value) => Reflect.set(real(), key, value),
    defineProperty: (_t, key, d) => Reflect.defineProperty(real(), key, d),
    deleteProperty: (_t, key) => Reflect.deleteProperty(real(), key),
  })
}

/** The same value: the same keys in the same order (undefined ones too), the same primitives. */
function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every((k, i) => k === kb[i] && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

function verify(schema: Parser, input: unknown, out: unknown): void {
  const z = schema.safeParse(input)
  if (!z.success || !same(z.data, out))
    throw new Error(
      `plain check differs from zod: it accepted ${shown(input)} as ${shown(out)}, zod ${z.success ? `as ${shown(z.data)}` : 'refused it'}`,
    )
}

const shown = (v: unknown): string => {
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** zod's `isPlainObject`. */
function isPlainObject(o: unknown): o is Record<string, unknown> {
  if (!isObject(o)) return false
  const ctor = (o as { constructor?: unknown }).constructor
  if (ctor === undefined || typeof ctor !== 'function') return true
  const prot = (ctor as { prototype?: unknown }).prototype
  if (!isObject(prot)) return false
  return Object.prototype.hasOwnProperty.call(prot, 'isPrototypeOf')
}

/** zod's `codePointLength`: UTF-16 units, a surrogate pair counted once. */
function codePoints(s: string): number {
  let count = s.length
  for (let i = 0; i < s.length - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--
      i++
    }
  }
  return count
}

/** True when every check passes (each as zod runs it on a value of the right type). */
function checksPass(checks: readonly PlainCheck[], v: string | number | unknown[]): boolean {
  for (const c of checks) {
    switch (c[0]) {
      case 'min': {
        const n = (v as string | unknown[]).length
        const len = typeof v === 'string' && n >= c[1] && n < c[1] * 2 ? codePoints(v) : n
        if (len < c[1]) return false
        break
      }
      case 'max': {
        const n = (v as string | unknown[]).length
        const len = typeof v === 'string' && n > c[1] ? codePoints(v) : n
        if (len > c[1]) return false
        break
      }
      case 'len': {
        const n = (v as string | unknown[]).length
        const len = typeof v === 'string' && n !== c[1] ? codePoints(v) : n
        if (len !== c[1]) return false
        break
      }
      case 'regex':
        c[1].lastIndex = 0
        if (!c[1].test(v as string)) return false
        break
      case 'gt':
        if (!(c[2] ? (v as number) >= c[1] : (v as number) > c[1])) return false
        break
      case 'lt':
        if (!(c[2] ? (v as number) <= c[1] : (v as number) < c[1])) return false
        break
      case 'safeint':
        if (!Number.isSafeInteger(v)) return false
        break
    }
  }
  return true
}

/**
 * The plain check of `n` over `v`: the value zod would return, or FAIL / BAIL. `unknown`, on the
 * two sides of an intersection, collects the keys a strict object did not know instead of
 * refusing them, through the nodes zod runs on the same payload.
 */
function run(n: PlainNode, v: unknown, unknown?: Set<string>): Outcome {
  if (n === 0) return BAIL
  if (n === 1) return v
  switch (n[0]) {
    case 'never':
      return FAIL
    case 'string':
      return typeof v === 'string' && checksPass(n[1], v) ? v : FAIL
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) && checksPass(n[1], v) ? v : FAIL
    case 'boolean':
      return typeof v === 'boolean' ? v : FAIL
    case 'values':
      return n[1].includes(v) ? v : FAIL
    case 'array': {
      if (!Array.isArray(v)) return FAIL
      // The length first (zod refuses an array past its maximum before reading it): the output
      // has the input's length, so the checks say the same of either.
      if (!checksPass(n[2], v)) return FAIL
      const out: unknown[] = Array(v.length)
      for (let i = 0; i < v.length; i++) {
        const r = run(n[1], v[i])
        if (r === FAIL || r === BAIL) return r
        out[i] = r
      }
      return out
    }
    case 'object':
      return object(n[1], n[2], v, unknown)
    case 'optional':
      if (v !== undefined) return run(n[1], v, unknown)
      if (n[2] !== 2) return undefined
      {
        const r = run(n[1], v)
        return r === FAIL ? undefined : r
      }
    case 'nullable':
      return v === null ? null : run(n[1], v, unknown)
    case 'default': {
      if (v === undefined) return n[2]()
      const r = run(n[1], v, unknown)
      return r === undefined ? n[2]() : r
    }
    case 'union':
      // One option is run on the union's own payload; several each on their own.
      if (n[1].length === 1) return run(n[1][0]!, v, unknown)
      for (const option of n[1]) {
        const r = run(option, v)
        if (r !== FAIL) return r
      }
      // zod hands on the one option that failed without aborting, and an enclosing intersection
      // may forgive its unknown keys: there, zod decides.
      return unknown ? BAIL : FAIL
    case 'discriminated': {
      if (!isObject(v)) return FAIL
      const option = n[2].get(v[n[1]])
      return option ? run(option, v, unknown) : FAIL
    }
    case 'record': {
      if (!isPlainObject(v)) return FAIL
      const out: Record<string, unknown> = {}
      for (const key of Reflect.ownKeys(v)) {
        if (key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(v, key)) continue
        // A key that is no string is refused; an enclosing intersection may forgive it (zod decides).
        if (typeof key !== 'string') return unknown ? BAIL : FAIL
        const r = run(n[1], v[key])
        if (r === FAIL || r === BAIL) return r
        out[key] = r
      }
      return out
    }
    case 'and':
      return intersection(n[1], n[2], v, unknown)
    case 'ref':
      return run(plainNode(n[1]), v, unknown)
  }
}

/**
 * zod's intersection (`$ZodIntersection`, `handleIntersectionResults`, `mergeValues`): both sides
 * over the same input, a key only one strict side did not know forgiven, the two values merged.
 * A side refused is a refusal (zod, for a side whose refusal does not abort and whose value does
 * not merge with the other's, throws instead: the plain check refuses that option of a union).
 */
function intersection(left: PlainNode, right: PlainNode, v: unknown, unknown?: Set<string>): Outcome {
  const ul = new Set<string>()
  const ur = new Set<string>()
  const a = run(left, v, ul)
  if (a === BAIL) return BAIL
  const b = run(right, v, ur)
  if (b === BAIL) return BAIL
  if (a === FAIL || b === FAIL) return FAIL
  const both = [...ul].filter((k) => ur.has(k))
  if (both.length) {
    if (!unknown) return FAIL
    // zod passes them on as one issue of its own payload, which an outer intersection collects.
    for (const k of both) unknown.add(k)
  }
  const merged = merge(a, b)
  return merged === BAIL ? BAIL : merged
}

/** zod's `mergeValues`: BAIL where zod would throw (values that do not merge). */
function merge(a: unknown, b: unknown): Outcome {
  if (a === b) return a
  if (isPlainObject(a) && isPlainObject(b)) {
    const out: Record<string, unknown> = { ...a, ...b }
    if (Object.prototype.hasOwnProperty.call(out, '__proto__')) delete out.__proto__
    const bKeys = new Set(Object.keys(b))
    for (const key of Object.keys(a)) {
      if (key === '__proto__' || !bKeys.has(key)) continue
      const m = merge(a[key], b[key])
      if (m === BAIL) return BAIL
      out[key] = m
    }
    return out
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return BAIL
    const out: unknown[] = []
    for (let i = 0; i < a.length; i++) {
      const m = merge(a[i], b[i])
      if (m === BAIL) return BAIL
      out.push(m)
    }
    return out
  }
  return BAIL
}

/** zod's object parse (`$ZodObject` and `handlePropertyResult`), without issues. */
function object(
  shape: Readonly<Record<string, PlainProp>>,
  catchall: PlainProp | null,
  v: unknown,
  unknown?: Set<string>,
): Outcome {
  if (!isObject(v)) return FAIL
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(shape)) {
    if (key === '__proto__') continue
    const r = property(shape[key]!, key, v, out)
    if (r !== undefined) return r
  }
  if (catchall === null) return out
  const strict = catchall[0] !== 0 && catchall[0] !== 1 && catchall[0][0] === 'never'
  for (const key in v) {
    if (Object.prototype.hasOwnProperty.call(shape, key)) continue
    if (strict) {
      if (!unknown) return FAIL
      unknown.add(key)
      continue
    }
    if (key === '__proto__') continue
    const r = property(catchall, key, v, out)
    if (r !== undefined) return r
  }
  return out
}

/** One property into `out`; FAIL or BAIL to stop, undefined to go on. */
function property(
  [node, optin, optout]: PlainProp,
  key: string,
  input: Record<string, unknown>,
  out: Record<string, unknown>,
): typeof FAIL | typeof BAIL | undefined {
  const present = key in input
  if (!present && optout === 1 && optin === 1) return undefined
  const r = run(node, input[key])
  if (r === BAIL) return BAIL
  if (r === FAIL) return optin !== 0 && optout === 1 && !present ? undefined : FAIL
  if (!present && optin === 0) return FAIL
  if (r === undefined) {
    if (present || (optin === 2 && optout !== 1)) out[key] = undefined
  } else out[key] = r
  return undefined
}
