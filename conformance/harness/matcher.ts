/**
 * Partial matching of received messages against transcript patterns.
 *
 * - Objects match partially: every key of the pattern must match; extra keys are allowed.
 *   `{"$exact": v}` demands deep equality (no extra keys anywhere below).
 * - Arrays match element by element and must have the same length;
 *   `{"$contains": [p…]}` accepts any array holding a match for each pattern.
 *   `{"$anyOf": [p…]}` accepts a value matching one of the patterns (the spec allows either:
 *   e.g. a cancelled request answered normally or with -32800); captures come from the first
 *   alternative that matches.
 * - Operators (an object with one `$` key):
 *   `{"$any": true}` any present value; `{"$absent": true}` the key must be missing (an object
 *   pattern holding only `$absent` members also holds when the object itself is missing);
 *   `{"$type": "string"|"number"|"integer"|"boolean"|"object"|"array"|"null"}`;
 *   `{"$regex": "…"}` a string matching the pattern;
 *   `{"$capture": "name"}` any value, remembered as `name` (a second capture must be equal);
 *   `{"$placeholder": "timestamp"|"iso8601"|"uuid"|"session_id"|"event_id"|"epoch"}` volatile
 *   values by shape.
 * - Strings may contain `${name}` to use a captured value; a string that is exactly `${name}`
 *   stands for the captured value itself (any type).
 */

export type Vars = Map<string, unknown>
export interface Mismatch {
  path: string
  reason: string
}

const PLACEHOLDERS: Record<string, (v: unknown) => boolean> = {
  timestamp: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v),
  iso8601: (v) =>
    typeof v === 'string' &&
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(v) &&
    !Number.isNaN(Date.parse(v)),
  uuid: (v) => typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  session_id: (v) => typeof v === 'string' && /^(otter|ferret|mink)-\d{8}T\d{6}Z-[0-9a-f-]{8,36}$/.test(v),
  event_id: (v) => typeof v === 'string' && /^evt-[0-9a-f-]{8,36}$/.test(v),
  epoch: (v) => typeof v === 'number' && v > 1e9,
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const show = (v: unknown): string => (v === undefined ? 'nothing' : (JSON.stringify(v)?.slice(0, 200) ?? String(v)))

function typeOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number' && Number.isInteger(v)) return 'integer'
  return typeof v
}

/** Replace `${name}` references in a pattern or message with captured values. */
export function substitute(value: unknown, vars: Vars): unknown {
  if (typeof value === 'string') {
    const whole = /^\$\{([A-Za-z_][\w]*)\}$/.exec(value)
    if (whole) {
      if (!vars.has(whole[1]!)) throw new Error(`\${${whole[1]}} used before it was captured`)
      return vars.get(whole[1]!)
    }
    return value.replace(/\$\{([A-Za-z_][\w]*)\}/g, (_m, n: string) => {
      if (!vars.has(n)) throw new Error(`\${${n}} used before it was captured`)
      return String(vars.get(n))
    })
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars))
  if (isPlainObject(value)) {
    if (Object.keys(value).length === 1 && ('$capture' in value || '$regex' in value)) return value
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]))
  }
  return value
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))
}
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical)
  if (isPlainObject(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    )
  return v
}

/** Match `actual` against `pattern`; returns the mismatches (empty = match). Captures go into `vars`. */
export function match(pattern: unknown, actual: unknown, vars: Vars = new Map(), path = '$'): Mismatch[] {
  if (isPlainObject(pattern)) {
    const keys = Object.keys(pattern)
    if (keys.length === 1 && keys[0]!.startsWith('$')) return operator(keys[0]!, pattern[keys[0]!], actual, vars, path)
    if (!isPlainObject(actual)) return [{ path, reason: `expected an object, got ${show(actual)}` }]
    const out: Mismatch[] = []
    for (const k of keys) {
      const p = pattern[k]
      if (isPlainObject(p) && '$absent' in p) {
        if (k in actual) out.push({ path: `${path}.${k}`, reason: `expected no "${k}", got ${show(actual[k])}` })
        continue
      }
      if (!(k in actual)) {
        // A pattern that only demands absence below this key holds when the key itself is missing
        // (an optional capability object left out entirely has none of its members).
        if (demandsOnlyAbsence(p)) continue
        out.push({ path: `${path}.${k}`, reason: 'missing' })
        continue
      }
      out.push(...match(p, actual[k], vars, `${path}.${k}`))
    }
    return out
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return [{ path, reason: `expected an array, got ${show(actual)}` }]
    if (pattern.length !== actual.length)
      return [{ path, reason: `expected ${pattern.length} items, got ${actual.length}` }]
    return pattern.flatMap((p, i) => match(p, actual[i], vars, `${path}[${i}]`))
  }
  const want = substitute(pattern, vars)
  return deepEqual(want, actual) ? [] : [{ path, reason: `expected ${show(want)}, got ${show(actual)}` }]
}

/** True for `{"$absent": true}` and objects whose every member pattern is (recursively) that. */
function demandsOnlyAbsence(p: unknown): boolean {
  if (!isPlainObject(p)) return false
  const keys = Object.keys(p)
  if (keys.length === 1 && keys[0] === '$absent') return true
  return keys.length > 0 && !keys.some((k) => k.startsWith('$')) && keys.every((k) => demandsOnlyAbsence(p[k]))
}

function operator(op: string, arg: unknown, actual: unknown, vars: Vars, path: string): Mismatch[] {
  const fail = (reason: string): Mismatch[] => [{ path, reason }]
  switch (op) {
    case '$any':
      return actual === undefined ? fail('expected a value') : []
    case '$absent':
      return actual === undefined ? [] : fail(`expected nothing, got ${show(actual)}`)
    case '$type':
      if (arg === 'number') return typeof actual === 'number' ? [] : fail(`expected a number, got ${show(actual)}`)
      return typeOf(actual) === arg ? [] : fail(`expected type ${String(arg)}, got ${show(actual)}`)
    case '$regex':
      return typeof actual === 'string' && new RegExp(String(arg)).test(actual)
        ? []
        : fail(`expected a string matching /${String(arg)}/, got ${show(actual)}`)
    case '$capture': {
      const name = String(arg)
      if (actual === undefined) return fail(`nothing to capture as ${name}`)
      if (vars.has(name))
        return deepEqual(vars.get(name), actual) ? [] : fail(`${name} was ${show(vars.get(name))}, now ${show(actual)}`)
      vars.set(name, actual)
      return []
    }
    case '$placeholder': {
      const check = PLACEHOLDERS[String(arg)]
      if (!check) return fail(`unknown placeholder ${String(arg)}`)
      return check(actual) ? [] : fail(`expected a ${String(arg)}, got ${show(actual)}`)
    }
    case '$anyOf': {
      if (!Array.isArray(arg) || !arg.length) return fail('$anyOf needs a non-empty array of patterns')
      const tried: Mismatch[] = []
      for (const p of arg) {
        const trial = new Map(vars)
        const ms = match(p, actual, trial, path)
        if (!ms.length) {
          for (const [k, v] of trial) vars.set(k, v)
          return []
        }
        tried.push(...ms)
      }
      return fail(
        `matches none of ${arg.length} alternatives (${tried.map((m) => `${m.path}: ${m.reason}`).join('; ')})`,
      )
    }
    case '$exact':
      return deepEqual(substitute(arg, vars), actual) ? [] : fail(`expected exactly ${show(arg)}, got ${show(actual)}`)
    case '$contains': {
      if (!Array.isArray(arg) || !Array.isArray(actual))
        return fail(`expected an array containing ${show(arg)}, got ${show(actual)}`)
      const out: Mismatch[] = []
      for (const p of arg) {
        const hit = actual.some((a) => match(p, a, new Map(vars)).length === 0)
        if (!hit) out.push({ path, reason: `no item matches ${show(p)}` })
        else {
          const i = actual.findIndex((a) => match(p, a, new Map(vars)).length === 0)
          match(p, actual[i], vars)
        }
      }
      return out
    }
    default:
      return fail(`unknown operator ${op}`)
  }
}

export function describeMismatches(ms: Mismatch[]): string {
  return ms.map((m) => `  at ${m.path}: ${m.reason}`).join('\n')
}
