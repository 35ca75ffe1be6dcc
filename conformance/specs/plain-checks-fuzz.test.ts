/**
 * The plain checks against zod on every described schema of generated/ (a differential fuzz):
 * inputs are drawn from each schema's own description, with hostile values mixed in (-0, NaN,
 * infinities, 2^53, lone surrogates, null-prototype objects, class instances, frozen objects,
 * proxies, inherited and `__proto__` keys, symbol keys, holes, explicit undefined, shuffled keys).
 * Whatever the plain check accepts, zod accepts as the same value (same own keys in the same
 * order, same prototypes); whatever it refuses, zod refuses. Seeded: a failure repeats.
 * And constructs no spec uses today, built by hand and described by the generator's own walk.
 */
import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import {
  built,
  lazySchema,
  plainModule,
  plainNode,
  plainResult,
  type PlainNode,
} from '../../generated/lazy-schema.gen.ts'
import { PlanDataSchema } from '../../generated/schemas.gen.ts'
import { plainWire } from '../../specs/codegen/lib/plain-checks.ts'
import { prng } from '../../client/wire/fixtures/seeded-random.ts'

const MODULES: Record<string, () => Promise<Record<string, unknown>>> = {
  'schemas.gen.ts': () => import('../../generated/schemas.gen.ts'),
  'acp/seed.gen.ts': () => import('../../generated/acp/seed.gen.ts'),
  'acp/v1-methods.gen.ts': () => import('../../generated/acp/v1-methods.gen.ts'),
  'acp/v1-schema.gen.ts': () => import('../../generated/acp/v1-schema.gen.ts'),
  'bridge/relay.gen.ts': () => import('../../generated/bridge/relay.gen.ts'),
  'http/routes.gen.ts': () => import('../../generated/http/routes.gen.ts'),
  'instances/forward.gen.ts': () => import('../../generated/instances/forward.gen.ts'),
  'rpc/jsonl.gen.ts': () => import('../../generated/rpc/jsonl.gen.ts'),
  'sse/events.gen.ts': () => import('../../generated/sse/events.gen.ts'),
  'tools/tools.gen.ts': () => import('../../generated/tools/tools.gen.ts'),
}

class Instance {
  constructor(o: object) {
    Object.assign(this, o)
  }
}

type Node = PlainNode
/** Inputs of every shape. */
type Any = any

function generator(rnd: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const hostile = (): unknown =>
    pick<unknown>([
      undefined,
      null,
      -0,
      NaN,
      Infinity,
      -Infinity,
      2 ** 53,
      2 ** 53 - 1,
      1.5,
      -1,
      0,
      '',
      '\uD800',
      '\uD83D\uDE00',
      'a'.repeat(300),
      true,
      [],
      {},
      [undefined],
      Object.create(null),
      new Date(0),
      new Instance({}),
      JSON.parse('{"__proto__":{"a":1}}'),
      Symbol('s'),
      10n,
    ])
  const string = (checks: readonly (readonly unknown[])[]): string => {
    let min = 0
    let max = 12
    let len: number | undefined
    let re: RegExp | undefined
    for (const c of checks) {
      if (c[0] === 'min') min = c[1] as number
      if (c[0] === 'max') max = Math.min(c[1] as number, min + 12)
      if (c[0] === 'len') len = c[1] as number
      if (c[0] === 'regex') re = c[1] as RegExp
    }
    if (re) {
      const samples = [
        '2026-11-28T01:00:00Z',
        '2026-11-28T01:00:00.123+01:00',
        'fer_1',
        'abc',
        'a-b_c',
        'A1',
        'e1',
        'x',
      ]
      const ok = samples.filter((s) => ((re.lastIndex = 0), re.test(s)))
      if (ok.length && rnd() < 0.9) return pick(ok)
    }
    const n = len ?? min + Math.floor(rnd() * (max - min + 1))
    let s = ''
    while (s.length < n) s += rnd() < 0.8 ? 'a' : pick(['b', 'Z', '0', '😀', '\uD800', ' ', '_'])
    return s
  }
  const number = (checks: readonly (readonly unknown[])[]): number => {
    let lo = -1000
    let hi = 1000
    let int = false
    for (const c of checks) {
      if (c[0] === 'gt') lo = (c[1] as number) + (c[2] ? 0 : 1)
      if (c[0] === 'lt') hi = (c[1] as number) - (c[2] ? 0 : 1)
      if (c[0] === 'safeint') int = true
    }
    if (rnd() < 0.1) return pick([lo, hi, lo - 1, hi + 1, -0, lo + 0.5])
    const v = lo + rnd() * (hi - lo)
    return int ? Math.round(v) : v
  }
  const shaped = (o: Record<string, unknown>): unknown => {
    const r = rnd()
    if (r < 0.03) return Object.assign(Object.create(null), o)
    if (r < 0.06) return new Instance(o)
    if (r < 0.09) return Object.freeze(o)
    if (r < 0.11) return new Proxy(o, {})
    if (r < 0.13) {
      const keys = Object.keys(o)
      if (keys.length) {
        const k = pick(keys)
        const v = o[k]
        delete o[k]
        return Object.setPrototypeOf(o, { [k]: v })
      }
    }
    return o
  }
  const gen = (n: Node, depth: number): unknown => {
    if (rnd() < 0.03) return hostile()
    if (n === 0 || n === 1) return pick<unknown>([1, 'a', null, [1, {}], { k: { j: 1 } }])
    switch (n[0]) {
      case 'never':
        return hostile()
      case 'string':
        return string(n[1])
      case 'number':
        return number(n[1])
      case 'boolean':
        return rnd() < 0.5
      case 'values':
        return pick(n[1])
      case 'array': {
        const a = Array.from({ length: depth > 6 ? 0 : Math.floor(rnd() * 3) }, () => gen(n[1], depth + 1))
        if (rnd() < 0.05) a.length += 1
        return a
      }
      case 'object': {
        const o: Record<string, unknown> = {}
        const keys = Object.keys(n[1])
        if (rnd() < 0.3) keys.reverse()
        for (const k of keys) {
          const [node, optin] = n[1][k]!
          const r = rnd()
          if ((optin && r < 0.3) || r < 0.02) continue
          o[k] = r < 0.05 ? undefined : gen(node, depth + 1)
        }
        if (rnd() < 0.1) o[pick(['extra', 'toString', 'constructor', '1'])] = gen(n[2] ? n[2][0] : 1, depth + 1)
        if (rnd() < 0.05)
          Object.defineProperty(o, '__proto__', {
            value: { q: 1 },
            enumerable: true,
            configurable: true,
            writable: true,
          })
        return shaped(o)
      }
      case 'optional':
        return rnd() < 0.3 ? undefined : gen(n[1], depth)
      case 'nullable':
        return rnd() < 0.2 ? null : gen(n[1], depth)
      case 'default':
        return rnd() < 0.3 ? undefined : gen(n[1], depth)
      case 'union':
        return gen(pick(n[1]), depth)
      case 'discriminated': {
        const [tag, node] = pick([...n[2].entries()])
        const v = node ? gen(node, depth) : {}
        if (v && typeof v === 'object' && Object.isExtensible(v) && rnd() < 0.9)
          try {
            ;(v as Record<string, unknown>)[n[1]] = tag
          } catch {
            // a proxy or a setter refused it
          }
        return v
      }
      case 'record': {
        const o: Record<string | symbol, unknown> = {}
        for (let i = Math.floor(rnd() * 3); i > 0; i--)
          o[pick(['a', 'b', '2', '10', 'toString'])] = gen(n[1], depth + 1)
        if (rnd() < 0.05) o[Symbol('s')] = 1
        return o
      }
      case 'and': {
        const a = gen(n[1], depth)
        const b = gen(n[2], depth)
        return a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) ? { ...b, ...a } : a
      }
      case 'ref':
        return gen(plainNode(n[1]), depth)
    }
  }
  return gen
}

/** The same value: own keys (symbols too) in the same order, same prototypes, same primitives. */
function same(a: Any, b: Any): boolean {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || !a || !b) return false
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  const ka = Reflect.ownKeys(a)
  const kb = Reflect.ownKeys(b)
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same(a[k], b[k]))
}

const show = (v: unknown): string => {
  try {
    return String(
      JSON.stringify(v, (_k, x: unknown) => (x === undefined ? '<undefined>' : typeof x === 'bigint' ? `${x}n` : x)),
    ).slice(0, 300)
  } catch (e) {
    return String(e)
  }
}

/** Where the plain check and zod disagree on `input`, or undefined. */
function divergence(schema: object, input: unknown): string | undefined {
  const p = plainResult(schema, input)
  let zr: { success: boolean; data?: unknown } | { threw: string }
  try {
    zr = (built(schema) as unknown as { safeParse(v: unknown): { success: boolean; data?: unknown } }).safeParse(input)
  } catch (e) {
    zr = { threw: (e as Error).message }
  }
  if (p.ok) {
    if ('threw' in zr) return `plain accepts, zod throws ${zr.threw}`
    if (!zr.success) return 'plain accepts, zod refuses'
    if (!same(p.value, zr.data)) return `values differ: plain ${show(p.value)}, zod ${show(zr.data)}`
  } else if (p.covered && 'success' in zr && zr.success) return `plain refuses, zod accepts as ${show(zr.data)}`
  return undefined
}

describe('plain checks against zod', () => {
  it('every described schema of generated/, on inputs drawn from its description with hostile values mixed in', async () => {
    const gen = generator(prng(20261128))
    const seen = { schemas: 0, inputs: 0, accepted: 0, refused: 0 }
    const wrong: string[] = []
    for (const [file, load] of Object.entries(MODULES)) {
      const mod = await load()
      for (const [name, schema] of Object.entries(mod)) {
        if (!name.endsWith('Schema') || !schema || typeof schema !== 'object') continue
        const node = plainNode(schema)
        if (node === 0) continue
        seen.schemas++
        for (let i = 0; i < 16; i++) {
          const input = gen(node, 0)
          seen.inputs++
          const r = plainResult(schema, input)
          if (r.ok) seen.accepted++
          else if (r.covered) seen.refused++
          const d = divergence(schema, input)
          if (d && wrong.length < 10) wrong.push(`${file} ${name} on ${show(input)}: ${d}`)
        }
      }
    }
    expect(wrong).toEqual([])
    expect(seen.schemas).toBeGreaterThan(800)
    expect(seen.accepted).toBeGreaterThan(seen.inputs / 4)
    expect(seen.refused).toBeGreaterThan(seen.inputs / 10)
  }, 120_000)

  /** A hand-built zod schema with the description the generator derives from it. */
  const described = (build: () => z.ZodType): object => {
    const schema = build()
    const wire = plainWire(schema, () => undefined)
    const decode = plainModule({}, {})
    return lazySchema(build, () => decode(JSON.stringify(wire)))
  }

  /** A check's own condition (zod runs it; its parameter type does not list it). */
  const unlessAlways = { when: () => false } as unknown as Parameters<typeof z.minLength>[1]

  it('constructs no spec uses yet: each is described as zod behaves, or left to zod', () => {
    const a = z.object({ a: z.string() }).strict()
    const b = z.object({ b: z.string() }).strict()
    let n = 0
    const cases: [object, unknown][] = [
      // zod hands on the one union option that failed without aborting; the intersection forgives its unknown key.
      [described(() => z.intersection(z.union([a, b]), z.object({ c: z.string() }).strict())), { a: 'x', c: 'y' }],
      [
        described(() =>
          z.union([z.intersection(z.union([a, b]), z.object({ c: z.string() }).strict()), z.object({ a: z.string() })]),
        ),
        { a: 'x', c: 'y' },
      ],
      [
        described(() => z.intersection(z.record(z.string(), z.string()), z.object({ a: z.string() }))),
        { a: 'x', [Symbol('s')]: 1 },
      ],
      [described(() => z.object({ a: z.string().exactOptional() })), { a: undefined }],
      [described(() => z.object({ a: z.number().default(() => ++n) })), {}],
      [described(() => z.string().check(z.minLength(5, unlessAlways))), 'ab'],
      [described(() => z.array(z.string()).max(2)), ['a', 'b', 'c']],
    ]
    for (const [schema, input] of cases) expect(divergence(schema, input), show(input)).toBeUndefined()
    // What the generator leaves to zod.
    expect(plainWire(z.object({ a: z.string().exactOptional() }), () => undefined)).toEqual([
      'object',
      { a: [0, 1, 1] },
      null,
    ])
    expect(
      plainWire(
        z.number().default(() => ++n),
        () => undefined,
      ),
    ).toBe(0)
    expect(plainWire(z.string().check(z.minLength(5, unlessAlways)), () => undefined)).toBe(0)
  })

  it('an array past its maximum is refused before its elements are read', () => {
    const entries = new Proxy(Array.from({ length: 1_000_000 }), {
      get(t, k) {
        if (typeof k === 'string' && /^\d+$/.test(k)) throw new Error(`element ${k} read`)
        return Reflect.get(t, k)
      },
    })
    expect(plainResult(PlanDataSchema, { entries })).toEqual({ ok: false, covered: true })
  })

  it('a default is a fresh copy each time: a caller changing what it got changes no later parse', () => {
    const schema = described(() =>
      z.object({ caps: z.object({ fs: z.object({ read: z.boolean() }) }).default({ fs: { read: false } }) }),
    )
    const first = plainResult(schema, {}) as { ok: true; value: { caps: { fs: { read: boolean } } } }
    first.value.caps.fs.read = true
    expect(plainResult(schema, {})).toEqual({ ok: true, value: { caps: { fs: { read: false } } } })
  })
})
