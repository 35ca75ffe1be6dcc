/**
 * The plain checks in front of the generated zod validators (generated/lazy-schema.gen.ts, derived
 * by specs/codegen/lib/plain-checks.ts): what one accepts, zod accepts, as the same value (the
 * same keys in the same order); what one refuses, zod refuses; a valid input builds no zod schema.
 * Checked on every client message of the recorded ACP v1 transcripts, on seeded mutations of them,
 * and on the constructs the specs use. The whole suite also runs with CHIMERA_PLAIN_CHECK_VERIFY=1
 * (conformance/harness/test-env.ts), which parses every accepted value with zod as well.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import * as z from 'zod'
import { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import { ContentBlockSchema, InitializeRequestSchema } from '../../generated/acp/v1-schema.gen.ts'
import { BusRequestSchema } from '../../generated/instances/forward.gen.ts'
import { built, lazySchema, plainResult, verifyPlainChecks } from '../../generated/lazy-schema.gen.ts'
import { ChimeraEventSchema, SessionSummarySchema } from '../../generated/schemas.gen.ts'
import { abs } from '../../specs/codegen/lib/files.ts'
import { prng } from '../../client/wire/fixtures/seeded-random.ts'

interface Parser {
  safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: unknown[] } }
}
const zodOf = (schema: object): Parser => built(schema) as unknown as Parser

/** The plain check agrees with zod on `input`; what it said. */
function agree(schema: object, input: unknown, where: string): 'accepted' | 'refused' | 'undecided' {
  const p = plainResult(schema, input)
  const zr = zodOf(schema).safeParse(input)
  if (p.ok) {
    expect(zr.success, `${where}: the plain check accepted what zod refuses`).toBe(true)
    // The same keys in the same order, undefined ones included.
    expect(JSON.stringify(p.value), where).toBe(JSON.stringify(zr.data))
    expect(p.value, where).toStrictEqual(zr.data)
    return 'accepted'
  }
  if (p.covered) expect(zr.success, `${where}: the plain check refused what zod accepts`).toBe(false)
  return p.covered ? 'refused' : 'undecided'
}

/** Client → agent messages of the ACP v1 transcripts that have a params schema. */
function clientMessages(): { method: string; params: unknown; where: string }[] {
  const dir = abs('conformance/transcripts/acp-v1')
  const out: { method: string; params: unknown; where: string }[] = []
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!line.trim()) return
        const send = (JSON.parse(line) as { send?: { method?: unknown; params?: unknown } }).send
        if (typeof send?.method !== 'string' || !(send.method in acpV1Methods)) return
        out.push({ method: send.method, params: send.params ?? {}, where: `${file}:${i + 1}` })
      })
  }
  return out
}
const paramsOf = (method: string): object => (acpV1Methods as Record<string, { params: object }>)[method]!.params

const REPLACEMENTS: unknown[] = [null, 0, -1, 1.5, 2 ** 60, '', 'x', '😀', true, [], {}, [1], { extra: 1 }]

/** `v` with one change somewhere inside: a key dropped or added, a value replaced. */
function mutate(v: unknown, rnd: () => number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  if (Array.isArray(v)) {
    if (!v.length || rnd() < 0.3) return rnd() < 0.5 ? [...v, pick(REPLACEMENTS)] : pick(REPLACEMENTS)
    const i = Math.floor(rnd() * v.length)
    return v.map((x, j) => (j === i ? mutate(x, rnd) : x))
  }
  if (v && typeof v === 'object') {
    const keys = Object.keys(v)
    const r = rnd()
    if (!keys.length || r < 0.15)
      return { ...v, [pick(['extra', '_meta', 'type', 'text', '__proto__'])]: pick(REPLACEMENTS) }
    const k = pick(keys)
    if (r < 0.3) {
      const { [k]: _dropped, ...rest } = v as Record<string, unknown>
      return rest
    }
    return { ...v, [k]: mutate((v as Record<string, unknown>)[k], rnd) }
  }
  return pick(REPLACEMENTS)
}

describe('plain checks', () => {
  afterEach(() => {
    process.env.CHIMERA_PLAIN_CHECK_VERIFY = '1'
    verifyPlainChecks(true)
    vi.resetModules()
  })

  it('every client message of the ACP v1 transcripts: accepted as zod accepts it, refused only where zod refuses', () => {
    const seen = { accepted: 0, refused: 0, undecided: 0 }
    const messages = clientMessages()
    for (const m of messages) seen[agree(paramsOf(m.method), m.params, `${m.where} ${m.method}`)]++
    expect(messages.length).toBeGreaterThan(100)
    // Some transcripts send invalid params on purpose; the plain check decides nearly all the rest.
    const valid = messages.filter((m) => zodOf(paramsOf(m.method)).safeParse(m.params).success).length
    expect(seen.accepted).toBeGreaterThan(valid * 0.9)
  })

  it('two thousand seeded mutations of those messages: still never accepted otherwise than zod, nor refused where zod accepts', () => {
    const messages = clientMessages()
    const rnd = prng(20261128)
    const seen = { accepted: 0, refused: 0, undecided: 0 }
    for (let i = 0; i < 2000; i++) {
      const m = messages[Math.floor(rnd() * messages.length)]!
      let v = m.params
      for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) v = mutate(v, rnd)
      seen[agree(paramsOf(m.method), v, `mutation ${i} of ${m.where} ${m.method}: ${JSON.stringify(v)}`)]++
    }
    // Both sides are exercised.
    expect(seen.accepted).toBeGreaterThan(200)
    expect(seen.refused).toBeGreaterThan(200)
  })

  it('the constructs: defaults filled in, absent optional keys left out, unknown keys refused by strict objects, discriminated unions, intersections, patterns, lengths in code points', () => {
    // Defaults, and a default's value not shared between parses.
    const init = plainResult(InitializeRequestSchema, { protocolVersion: 1 })
    expect(init).toEqual({
      ok: true,
      value: {
        protocolVersion: 1,
        clientCapabilities: {
          fs: { readTextFile: false, writeTextFile: false },
          terminal: false,
          auth: { terminal: false },
        },
      },
    })
    const again = plainResult(InitializeRequestSchema, { protocolVersion: 1 }) as {
      value: { clientCapabilities: object }
    }
    expect(again.value.clientCapabilities).not.toBe(
      (init as { value: { clientCapabilities: object } }).value.clientCapabilities,
    )
    const cases: [object, unknown][] = [
      [InitializeRequestSchema, { protocolVersion: 1, clientCapabilities: { fs: {} }, clientInfo: null }],
      [InitializeRequestSchema, { protocolVersion: 70000 }],
      [InitializeRequestSchema, { protocolVersion: 1.5 }],
      [ContentBlockSchema, { type: 'text', text: 'hi' }],
      [ContentBlockSchema, { type: 'image', data: 'AAAA', mimeType: 'image/png' }],
      [ContentBlockSchema, { type: 'text', text: 'hi', extra: 1 }],
      [ContentBlockSchema, { type: 'resource_link', uri: 'file:///a', name: 'a' }],
      [SessionSummarySchema, { session_id: 'fer_1', title: '😀', started_at: '2026-11-28T01:00:00.000Z' }],
      [SessionSummarySchema, { session_id: 'fer_1', title: '😀'.repeat(200) }],
      [SessionSummarySchema, { session_id: 'fer_1', title: '😀'.repeat(201) }],
      [SessionSummarySchema, { session_id: 'fer_1', title: '' }],
      [SessionSummarySchema, { session_id: 'fer_1', started_at: 'yesterday' }],
      [SessionSummarySchema, { session_id: '-bad', steps: 1 }],
      [SessionSummarySchema, { session_id: 'fer_1', steps: 1.5 }],
      [SessionSummarySchema, { session_id: 'fer_1', steps: -1 }],
      [SessionSummarySchema, { session_id: 'fer_1', unknown: 1 }],
      [
        ChimeraEventSchema,
        {
          seq: 1,
          id: 'e1',
          session_id: 'fer_1',
          type: 'text_delta',
          turn: 1,
          ts: '2026-11-28T01:00:00Z',
          data: { text: 'a' },
        },
      ],
      [
        ChimeraEventSchema,
        {
          seq: 0,
          id: 'e1',
          session_id: 'fer_1',
          type: 'text_delta',
          turn: 1,
          ts: '2026-11-28T01:00:00Z',
          data: { text: 'a' },
        },
      ],
      // A required key that takes any value must still be there; a defaulted one need not.
      [BusRequestSchema, { t: 'req', id: '1', from: 'i1', payload: null }],
      [BusRequestSchema, { t: 'req', id: '1', from: 'i1', v: 1 }],
    ]
    const said = cases.map(([schema, input], i) => agree(schema, input, `case ${i}: ${JSON.stringify(input)}`))
    expect(said).toEqual([
      'accepted',
      'refused',
      'refused',
      'accepted',
      'accepted',
      // An intersection forgives a key only one strict side does not know (zod drops it).
      'accepted',
      'accepted',
      'accepted',
      'accepted',
      'refused',
      'refused',
      'refused',
      'refused',
      'refused',
      'refused',
      'refused',
      'accepted',
      'refused',
      'accepted',
      'refused',
    ])
  })

  it('a refused input gets zod’s own error', () => {
    const input = { protocolVersion: 'one', clientCapabilities: { fs: { readTextFile: 'yes' } } }
    const mine = (InitializeRequestSchema as unknown as Parser).safeParse(input)
    expect(mine.success).toBe(false)
    expect(mine.error?.issues).toEqual(zodOf(InitializeRequestSchema).safeParse(input).error?.issues)
  })

  it('valid initialize, session/new and prompt params, a summary and an event build no zod schema', async () => {
    delete process.env.CHIMERA_PLAIN_CHECK_VERIFY
    vi.resetModules()
    const methods = await import('../../generated/acp/v1-methods.gen.ts')
    const shared = await import('../../generated/schemas.gen.ts')
    const BUILD_MS = Symbol.for('chimera.validatorBuildMs')
    const timing = globalThis as { [BUILD_MS]?: number }
    const before = timing[BUILD_MS] ?? 0
    const builds: unknown[] = [
      methods.InitializeParamsSchema.parse({ protocolVersion: 1, clientCapabilities: {} }),
      methods.SessionNewParamsSchema.parse({ cwd: '/tmp', mcpServers: [] }),
      methods.SessionPromptParamsSchema.parse({ sessionId: 'fer_1', prompt: [{ type: 'text', text: '!say hi' }] }),
      shared.SessionSummarySchema.parse({ session_id: 'fer_1', status: 'idle' }),
      shared.ChimeraEventSchema.parse({
        seq: 1,
        id: 'e1',
        session_id: 'fer_1',
        type: 'text_delta',
        turn: 1,
        ts: '2026-11-28T01:00:00Z',
        data: { text: 'a' },
      }),
    ]
    expect(builds).toHaveLength(5)
    expect(timing[BUILD_MS] ?? 0).toBe(before)
    // An invalid one goes to zod, which builds its schema.
    expect(methods.SessionNewParamsSchema.safeParse({ cwd: 1 }).success).toBe(false)
    expect(timing[BUILD_MS] ?? 0).toBeGreaterThan(before)
  })

  it('a plain check that differs from zod throws under CHIMERA_PLAIN_CHECK_VERIFY=1', () => {
    // Says unknown keys are kept where zod drops them.
    const wrong = lazySchema(
      () => z.object({ a: z.string() }),
      () => ['object', { a: [['string', []], 0, 0] }, [1, 0, 0]],
    )
    expect(wrong.parse({ a: 'x' })).toEqual({ a: 'x' })
    expect(() => wrong.parse({ a: 'x', b: 1 })).toThrow(/plain check differs from zod/)
    verifyPlainChecks(false)
    expect(wrong.parse({ a: 'x', b: 1 })).toEqual({ a: 'x', b: 1 })
  })
})
