/**
 * Self-tests of the transcript matcher: a table of (pattern, actual, match or not, and for a
 * failure the paths the mismatches point at), one row per operator and structural rule, then
 * the capture/substitution sequences that need shared state.
 */
import { describe, expect, it } from 'vitest'
import { describeMismatches, match, substitute, type Vars } from './matcher.ts'

interface Row {
  name: string
  pattern: unknown
  actual: unknown
  /** Captured values available before matching. */
  vars?: Record<string, unknown>
  /** undefined = must match; a list = must fail with mismatches at exactly these paths. */
  fails?: string[]
  /** For failures: each reason must match. */
  reason?: RegExp
}

const vars = (o: Record<string, unknown> = {}): Vars => new Map(Object.entries(o))

const ROWS: Row[] = [
  // ---------------------------------------------------------------- scalars
  { name: 'equal numbers match', pattern: 1, actual: 1 },
  { name: 'different numbers fail at the root', pattern: 1, actual: 2, fails: ['$'], reason: /expected 1, got 2/ },
  { name: 'a number does not match its string form', pattern: 1, actual: '1', fails: ['$'] },
  { name: 'null matches null', pattern: null, actual: null },
  { name: 'null does not match a missing value', pattern: null, actual: undefined, fails: ['$'] },
  { name: 'false does not match 0', pattern: false, actual: 0, fails: ['$'] },

  // ---------------------------------------------------------------- objects: partial by default
  { name: 'an object pattern matches with extra keys in actual', pattern: { a: 1 }, actual: { a: 1, b: 2 } },
  { name: 'the empty object pattern matches any object', pattern: {}, actual: { x: [1] } },
  {
    name: 'an object pattern does not match an array',
    pattern: {},
    actual: [],
    fails: ['$'],
    reason: /expected an object/,
  },
  {
    name: 'an object pattern does not match null',
    pattern: { a: 1 },
    actual: null,
    fails: ['$'],
    reason: /expected an object/,
  },
  {
    name: 'a missing key fails at that key',
    pattern: { a: 1, b: 2 },
    actual: { a: 1 },
    fails: ['$.b'],
    reason: /missing/,
  },
  {
    name: 'a wrong nested value fails at the nested path',
    pattern: { a: { b: { c: 'x' } } },
    actual: { a: { b: { c: 'y' } } },
    fails: ['$.a.b.c'],
  },
  {
    name: 'every mismatching key is reported',
    pattern: { a: 1, b: 2, c: 3 },
    actual: { a: 0, b: 2 },
    fails: ['$.a', '$.c'],
  },

  // ---------------------------------------------------------------- $exact
  {
    name: '$exact matches a deeply equal value regardless of key order',
    pattern: { $exact: { a: 1, b: { c: [1, 2] } } },
    actual: { b: { c: [1, 2] }, a: 1 },
  },
  {
    name: '$exact fails on an extra top-level key',
    pattern: { $exact: { a: 1 } },
    actual: { a: 1, b: 2 },
    fails: ['$'],
    reason: /expected exactly/,
  },
  {
    name: '$exact fails on an extra key deep below',
    pattern: { r: { $exact: { a: { b: 1 } } } },
    actual: { r: { a: { b: 1, c: 2 } } },
    fails: ['$.r'],
  },
  { name: '$exact fails on a different scalar', pattern: { $exact: 'x' }, actual: 'y', fails: ['$'] },
  {
    name: '$exact substitutes a captured value',
    pattern: { $exact: { id: '${sid}' } },
    actual: { id: 7 },
    vars: { sid: 7 },
  },

  // ---------------------------------------------------------------- arrays
  { name: 'equal arrays match', pattern: [1, { a: 2 }], actual: [1, { a: 2, extra: true }] },
  {
    name: 'an array pattern fails on a longer array at the array path',
    pattern: { xs: [1, 2] },
    actual: { xs: [1, 2, 3] },
    fails: ['$.xs'],
    reason: /expected 2 items, got 3/,
  },
  {
    name: 'an array pattern fails on a shorter array',
    pattern: [1, 2],
    actual: [1],
    fails: ['$'],
    reason: /expected 2 items, got 1/,
  },
  { name: 'the empty array pattern fails on a non-empty array', pattern: [], actual: [1], fails: ['$'] },
  {
    name: 'an element mismatch fails at the element index',
    pattern: { xs: [1, { b: 2 }] },
    actual: { xs: [1, { b: 3 }] },
    fails: ['$.xs[1].b'],
  },
  {
    name: 'an array pattern does not match an object',
    pattern: [1],
    actual: { 0: 1 },
    fails: ['$'],
    reason: /expected an array/,
  },

  // ---------------------------------------------------------------- $contains
  {
    name: '$contains matches items in any order',
    pattern: { $contains: [{ k: 'b' }, { k: 'a' }] },
    actual: [{ k: 'a', v: 1 }, { k: 'c' }, { k: 'b' }],
  },
  { name: '$contains with no patterns matches the empty array', pattern: { $contains: [] }, actual: [] },
  {
    name: '$contains fails when no item matches, at the array path',
    pattern: { list: { $contains: [{ k: 'z' }] } },
    actual: { list: [{ k: 'a' }] },
    fails: ['$.list'],
    reason: /no item matches/,
  },
  {
    name: '$contains reports each unmatched pattern',
    pattern: { $contains: [{ k: 'a' }, { k: 'y' }, { k: 'z' }] },
    actual: [{ k: 'a' }],
    fails: ['$', '$'],
  },
  {
    name: '$contains fails on a non-array',
    pattern: { $contains: [1] },
    actual: { 0: 1 },
    fails: ['$'],
    reason: /expected an array containing/,
  },

  // ---------------------------------------------------------------- $any / $absent
  { name: '$any matches a present value, even null', pattern: { a: { $any: true } }, actual: { a: null } },
  {
    name: '$any fails on a missing key',
    pattern: { a: { $any: true } },
    actual: {},
    fails: ['$.a'],
    reason: /missing/,
  },
  {
    name: '$any at the root fails on nothing',
    pattern: { $any: true },
    actual: undefined,
    fails: ['$'],
    reason: /expected a value/,
  },
  { name: '$absent matches a missing key', pattern: { a: 1, b: { $absent: true } }, actual: { a: 1 } },
  {
    name: '$absent fails on a present key, even one holding null',
    pattern: { b: { $absent: true } },
    actual: { b: null },
    fails: ['$.b'],
    reason: /expected no "b"/,
  },
  {
    name: '$absent fails on a present nested key at its path',
    pattern: { r: { error: { $absent: true } } },
    actual: { r: { error: { code: 1 } } },
    fails: ['$.r.error'],
  },
  {
    name: 'an object demanding only absence holds when the object itself is missing',
    pattern: { caps: { session: { delete: { $absent: true } } } },
    actual: { caps: {} },
  },
  {
    name: 'an object demanding absence still fails on a present member',
    pattern: { caps: { session: { delete: { $absent: true } } } },
    actual: { caps: { session: { delete: {} } } },
    fails: ['$.caps.session.delete'],
  },
  {
    name: 'an object demanding absence and a value fails when missing',
    pattern: { caps: { delete: { $absent: true }, list: {} } },
    actual: {},
    fails: ['$.caps'],
    reason: /missing/,
  },

  // ---------------------------------------------------------------- $type
  { name: '$type string', pattern: { $type: 'string' }, actual: '' },
  { name: '$type number accepts an integer', pattern: { $type: 'number' }, actual: 3 },
  { name: '$type number accepts a fraction', pattern: { $type: 'number' }, actual: 3.5 },
  { name: '$type integer accepts an integer', pattern: { $type: 'integer' }, actual: -4 },
  {
    name: '$type integer rejects a fraction',
    pattern: { n: { $type: 'integer' } },
    actual: { n: 1.5 },
    fails: ['$.n'],
    reason: /expected type integer/,
  },
  { name: '$type boolean', pattern: { $type: 'boolean' }, actual: false },
  { name: '$type object accepts an object', pattern: { $type: 'object' }, actual: { a: 1 } },
  { name: '$type object rejects an array', pattern: { $type: 'object' }, actual: [], fails: ['$'] },
  { name: '$type object rejects null', pattern: { $type: 'object' }, actual: null, fails: ['$'] },
  { name: '$type array', pattern: { $type: 'array' }, actual: [] },
  { name: '$type null', pattern: { $type: 'null' }, actual: null },
  { name: '$type string rejects a number', pattern: { v: { $type: 'string' } }, actual: { v: 1 }, fails: ['$.v'] },
  {
    name: '$type number rejects a numeric string',
    pattern: { $type: 'number' },
    actual: '1',
    fails: ['$'],
    reason: /expected a number/,
  },

  // ---------------------------------------------------------------- $regex
  { name: '$regex matches a string', pattern: { v: { $regex: '^\\d+\\.\\d+\\.\\d+$' } }, actual: { v: '1.22.3' } },
  { name: '$regex is unanchored unless the pattern anchors', pattern: { $regex: 'b' }, actual: 'abc' },
  {
    name: '$regex fails on a non-matching string',
    pattern: { v: { $regex: '^a' } },
    actual: { v: 'ba' },
    fails: ['$.v'],
    reason: /matching/,
  },
  { name: '$regex fails on a non-string', pattern: { $regex: '1' }, actual: 1, fails: ['$'] },

  // ---------------------------------------------------------------- $placeholder
  {
    name: '$placeholder timestamp accepts RFC 3339 with Z',
    pattern: { $placeholder: 'timestamp' },
    actual: '2026-01-02T03:04:05.678Z',
  },
  {
    name: '$placeholder timestamp accepts an offset',
    pattern: { $placeholder: 'timestamp' },
    actual: '2026-01-02T03:04:05+02:00',
  },
  {
    name: '$placeholder timestamp rejects a date without time',
    pattern: { t: { $placeholder: 'timestamp' } },
    actual: { t: '2026-01-02' },
    fails: ['$.t'],
    reason: /expected a timestamp/,
  },
  { name: '$placeholder iso8601 accepts an ISO date', pattern: { $placeholder: 'iso8601' }, actual: '2026-01-02' },
  {
    name: '$placeholder iso8601 accepts an ISO date-time with offset',
    pattern: { $placeholder: 'iso8601' },
    actual: '2026-01-02T03:04:05.5+02:00',
  },
  {
    name: '$placeholder iso8601 rejects a non-date',
    pattern: { $placeholder: 'iso8601' },
    actual: 'not a date',
    fails: ['$'],
  },
  {
    name: '$placeholder iso8601 rejects a number',
    pattern: { $placeholder: 'iso8601' },
    actual: 1767225600000,
    fails: ['$'],
  },
  {
    name: '$placeholder uuid accepts a uuid',
    pattern: { $placeholder: 'uuid' },
    actual: '123e4567-e89b-12d3-a456-426614174000',
  },
  {
    name: '$placeholder uuid rejects a truncated uuid',
    pattern: { $placeholder: 'uuid' },
    actual: '123e4567-e89b-12d3-a456',
    fails: ['$'],
  },
  {
    name: '$placeholder session_id accepts an otter id',
    pattern: { $placeholder: 'session_id' },
    actual: 'otter-20260101T000000Z-0000aaaa',
  },
  {
    name: '$placeholder session_id accepts a ferret id with a uuid tail',
    pattern: { $placeholder: 'session_id' },
    actual: 'ferret-20260101T120000Z-123e4567-e89b-12d3-a456-426614174000',
  },
  {
    name: '$placeholder session_id rejects another prefix',
    pattern: { $placeholder: 'session_id' },
    actual: 'weasel-20260101T000000Z-0000aaaa',
    fails: ['$'],
  },
  { name: '$placeholder event_id accepts evt-<hex>', pattern: { $placeholder: 'event_id' }, actual: 'evt-0123abcd' },
  {
    name: '$placeholder event_id rejects a bare counter',
    pattern: { $placeholder: 'event_id' },
    actual: '12',
    fails: ['$'],
  },
  { name: '$placeholder epoch accepts epoch milliseconds', pattern: { $placeholder: 'epoch' }, actual: 1767225600000 },
  { name: '$placeholder epoch rejects a small number', pattern: { $placeholder: 'epoch' }, actual: 12, fails: ['$'] },
  {
    name: '$placeholder epoch rejects a string',
    pattern: { $placeholder: 'epoch' },
    actual: '1767225600000',
    fails: ['$'],
  },

  // ---------------------------------------------------------------- $anyOf
  {
    name: '$anyOf matches the first alternative',
    pattern: { $anyOf: [{ result: { stopReason: 'cancelled' } }, { error: { code: -32800 } }] },
    actual: { id: 1, result: { stopReason: 'cancelled' } },
  },
  {
    name: '$anyOf matches a later alternative',
    pattern: { $anyOf: [{ result: { stopReason: 'cancelled' } }, { error: { code: -32800 } }] },
    actual: { id: 1, error: { code: -32800, message: 'Request cancelled' } },
  },
  {
    name: '$anyOf fails when no alternative matches, naming them',
    pattern: { r: { $anyOf: [1, 2] } },
    actual: { r: 3 },
    fails: ['$.r'],
    reason: /none of 2 alternatives/,
  },
  { name: '$anyOf with no alternatives fails', pattern: { $anyOf: [] }, actual: 1, fails: ['$'], reason: /non-empty/ },

  // ---------------------------------------------------------------- unknowns fail instead of matching everything
  {
    name: 'an unknown placeholder fails',
    pattern: { t: { $placeholder: 'whenever' } },
    actual: { t: '2026-01-02T03:04:05Z' },
    fails: ['$.t'],
    reason: /unknown placeholder whenever/,
  },
  {
    name: 'an unknown operator fails',
    pattern: { a: { $anything: true } },
    actual: { a: 1 },
    fails: ['$.a'],
    reason: /unknown operator \$anything/,
  },
  {
    name: 'an unknown operator fails even at the root',
    pattern: { $startsWith: 'x' },
    actual: 'xy',
    fails: ['$'],
    reason: /unknown operator/,
  },

  // ---------------------------------------------------------------- ${name} substitution
  {
    name: 'a whole-string ${name} stands for the captured value with its type',
    pattern: { id: '${n}' },
    actual: { id: 42 },
    vars: { n: 42 },
  },
  {
    name: 'a whole-string ${name} does not match the stringified value',
    pattern: { id: '${n}' },
    actual: { id: '42' },
    vars: { n: 42 },
    fails: ['$.id'],
  },
  {
    name: 'a whole-string ${name} can stand for an object',
    pattern: { o: '${obj}' },
    actual: { o: { a: [1] } },
    vars: { obj: { a: [1] } },
  },
  {
    name: '${name} inside a longer string is interpolated',
    pattern: { path: '/sessions/${sid}/events' },
    actual: { path: '/sessions/s-1/events' },
    vars: { sid: 's-1' },
  },
  {
    name: '${name} inside a longer string fails on another value',
    pattern: { path: '/sessions/${sid}/events' },
    actual: { path: '/sessions/s-2/events' },
    vars: { sid: 's-1' },
    fails: ['$.path'],
  },
  {
    name: 'several ${name}s in one string are all interpolated',
    pattern: '${a}:${b}',
    actual: 'x:1',
    vars: { a: 'x', b: 1 },
  },
  {
    name: '${name} inside array elements is substituted',
    pattern: ['${a}', 'k-${a}'],
    actual: [true, 'k-true'],
    vars: { a: true },
  },
]

describe('matcher table', () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const ms = match(row.pattern, row.actual, vars(row.vars))
      if (!row.fails) {
        expect(ms, describeMismatches(ms)).toEqual([])
        return
      }
      expect(ms.length).toBeGreaterThan(0)
      expect(ms.map((m) => m.path)).toEqual(row.fails)
      if (row.reason) for (const m of ms) expect(m.reason).toMatch(row.reason)
    })
  }
})

describe('captures', () => {
  it('$anyOf keeps the captures of the alternative that matched, not of those that failed', () => {
    const v = vars()
    expect(
      match({ $anyOf: [{ a: { $capture: 'x' }, b: 1 }, { c: { $capture: 'y' } }] }, { a: 5, b: 2, c: 7 }, v),
    ).toEqual([])
    expect([...v.entries()]).toEqual([['y', 7]])
  })
  it('the first $capture binds the value', () => {
    const v = vars()
    expect(match({ sessionId: { $capture: 'sid' } }, { sessionId: 'otter-1', other: 1 }, v)).toEqual([])
    expect(v.get('sid')).toBe('otter-1')
  })

  it('a $capture binds values of any type, including objects', () => {
    const v = vars()
    expect(match({ r: { $capture: 'r' } }, { r: { a: [1, null] } }, v)).toEqual([])
    expect(v.get('r')).toEqual({ a: [1, null] })
  })

  it('a later $capture of the same name with an equal value matches', () => {
    const v = vars()
    expect(match({ $capture: 'x' }, { a: 1, b: 2 }, v)).toEqual([])
    expect(match({ $capture: 'x' }, { b: 2, a: 1 }, v)).toEqual([])
  })

  it('a later $capture of the same name with a different value fails at its path and keeps the first value', () => {
    const v = vars()
    expect(match({ id: { $capture: 'id' } }, { id: 1 }, v)).toEqual([])
    const ms = match({ result: { id: { $capture: 'id' } } }, { result: { id: 2 } }, v)
    expect(ms.length).toBeGreaterThan(0)
    expect(ms.map((m) => m.path)).toEqual(['$.result.id'])
    expect(ms[0]!.reason).toMatch(/id was 1, now 2/)
    expect(v.get('id')).toBe(1)
  })

  it('a $capture of a missing key fails with "missing" and binds nothing', () => {
    const v = vars()
    const ms = match({ id: { $capture: 'id' } }, {}, v)
    expect(ms.map((m) => m.path)).toEqual(['$.id'])
    expect(v.has('id')).toBe(false)
  })

  it('a $capture at the root of nothing fails', () => {
    const v = vars()
    const ms = match({ $capture: 'x' }, undefined, v)
    expect(ms.map((m) => m.path)).toEqual(['$'])
    expect(ms[0]!.reason).toMatch(/nothing to capture/)
    expect(v.has('x')).toBe(false)
  })

  it('a captured value is used by ${name} in a later pattern', () => {
    const v = vars()
    expect(match({ result: { sessionId: { $capture: 'sid' } } }, { result: { sessionId: 'otter-9' } }, v)).toEqual([])
    expect(match({ params: { sessionId: '${sid}' } }, { params: { sessionId: 'otter-9' } }, v)).toEqual([])
    const ms = match({ params: { sessionId: '${sid}' } }, { params: { sessionId: 'otter-8' } }, v)
    expect(ms.map((m) => m.path)).toEqual(['$.params.sessionId'])
  })

  it('a captured value is used by ${name} inside a longer string in a later pattern', () => {
    const v = vars()
    expect(match({ n: { $capture: 'n' } }, { n: 3 }, v)).toEqual([])
    expect(match({ msg: 'turn ${n} done' }, { msg: 'turn 3 done' }, v)).toEqual([])
    expect(match({ msg: 'turn ${n} done' }, { msg: 'turn 4 done' }, v).map((m) => m.path)).toEqual(['$.msg'])
  })

  it('a $capture inside $contains binds the value of the matching item', () => {
    const v = vars()
    const ms = match(
      { $contains: [{ kind: 'b', id: { $capture: 'bid' } }] },
      [
        { kind: 'a', id: 1 },
        { kind: 'b', id: 2 },
      ],
      v,
    )
    expect(ms).toEqual([])
    expect(v.get('bid')).toBe(2)
  })

  it('${name} in a pattern before its capture throws instead of matching', () => {
    expect(() => match({ id: '${never}' }, { id: 1 }, vars())).toThrow(/\$\{never\} used before it was captured/)
  })
})

describe('substitute()', () => {
  it('replaces a whole-string reference with the value itself', () => {
    expect(substitute({ a: ['${x}'] }, vars({ x: { deep: 1 } }))).toEqual({ a: [{ deep: 1 }] })
  })

  it('interpolates a reference inside a longer string', () => {
    expect(substitute('id-${x}-${y}', vars({ x: 1, y: 'z' }))).toBe('id-1-z')
  })

  it('leaves $capture and $regex arguments untouched', () => {
    expect(substitute({ $regex: '^\\$\\{x\\}$' }, vars())).toEqual({ $regex: '^\\$\\{x\\}$' })
    expect(substitute({ $capture: '${x}' }, vars())).toEqual({ $capture: '${x}' })
  })

  it('throws on an uncaptured whole-string name', () => {
    expect(() => substitute('${missing}', vars({ other: 1 }))).toThrow(/\$\{missing\} used before it was captured/)
  })

  it('throws on an uncaptured name inside a longer string', () => {
    expect(() => substitute({ path: '/s/${missing}/events' }, vars())).toThrow(
      /\$\{missing\} used before it was captured/,
    )
  })

  it('leaves non-string scalars as they are', () => {
    expect(substitute([1, null, true], vars())).toEqual([1, null, true])
  })
})

describe('placeholders by shape: regressions', () => {
  // `iso8601` was once `!isNaN(Date.parse(v))`, and V8's legacy date parser accepts free text
  // such as "hello 1" (= 2001-01-01): junk where an ISO 8601 date belongs would have passed.
  it('$placeholder iso8601 rejects free text that Date.parse happens to accept ("hello 1", "March 7")', () => {
    for (const s of ['hello 1', 'March 7', '1']) {
      const ms = match({ $placeholder: 'iso8601' }, s)
      expect(
        ms.map((m) => m.path),
        `"${s}" was accepted as iso8601`,
      ).toEqual(['$'])
    }
  })
})
