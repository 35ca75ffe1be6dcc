/**
 * Schema-driven fuzzing of every HTTP operation: arbitraries derived from the
 * bundled OpenAPI document (request bodies, path and query parameters), sent valid and mutated
 * (a key dropped, a value of the wrong type, an unknown key, another JSON value, malformed
 * JSON, a wrong content type). Every response must be spec-valid (the conformance sniffer),
 * none may be a 5xx (a 502 `share_failed` from the http sink, whose collector is an unbound
 * loopback port here, is the documented upstream status), and afterwards the server answers
 * and a session it held before is unchanged. Bounded runs with a fixed seed (FUZZ_SEED
 * overrides it); fast-check prints the seed and the failing request on failure.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import bundle from '../../generated/http/openapi.bundle.json' with { type: 'json' }
import { httpOperations } from '../../generated/http/routes.gen.ts'
import { HttpSniffer } from '../../conformance/harness/sniffer.ts'
import { inProcessTarget, type ServerTarget } from '../../conformance/harness/targets.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)
// A thousand per operation: ~33,000 requests in about ten seconds in process.
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 1000)

type Schema = Record<string, unknown>
const doc = bundle as unknown as Schema

function resolve(s: Schema): Schema {
  let cur = s
  for (let i = 0; i < 10 && typeof cur.$ref === 'string'; i++) {
    cur = (cur.$ref as string)
      .slice(2)
      .split('/')
      .reduce<Schema>((o, k) => o[k] as Schema, doc)
  }
  return cur
}

/**
 * Values a real client sends for fields whose schema is just "a string": half the time a value
 * the server can act on (a known model, the workspace, a prompt that makes the offline model run
 * a tool, a real tool pattern), so valid requests start turns instead of stopping at a semantic
 * 400; the other half random.
 */
function domain(name: string | undefined): fc.Arbitrary<unknown> | undefined {
  const prompts = fc.constantFrom(
    '!say hi',
    '!call Read {"file_path":"a.txt"}',
    '!call Write {"file_path":"w.txt","content":"x"}',
    '!call Bash {"command":"echo hi"}',
    '!call Glob {"pattern":"**"}',
    '!sleep 5\n!say late',
    '!fail boom',
  )
  const table: Record<string, fc.Arbitrary<unknown>> = {
    prompt: prompts,
    message: prompts,
    model: fc.constantFrom('offline'),
    cwd: fc.constant(workspace),
    working_dir: fc.constant(workspace),
    allowed_tools: fc.subarray(['Read', 'Glob', 'Grep', 'Bash(echo:*)', 'Write']),
    max_steps: fc.integer({ min: 1, max: 4 }),
  }
  return name && name in table ? table[name] : undefined
}

/** A fast-check arbitrary of the values `schema` accepts (the subset of JSON Schema the spec uses). */
function arb(raw: Schema, depth = 0, name?: string): fc.Arbitrary<unknown> {
  const s = resolve(raw)
  const known = domain(name)
  if (known) return fc.oneof(known, arb({ ...s }, depth))
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]))
  if ('const' in s) return fc.constant(s.const)
  const alts = (s.oneOf ?? s.anyOf) as Schema[] | undefined
  if (alts) return fc.oneof(...alts.map((a) => arb(a, depth + 1)))
  if (Array.isArray(s.allOf)) return arb(s.allOf[0] as Schema, depth + 1)
  const type = Array.isArray(s.type) ? (s.type as string[])[0] : (s.type as string | undefined)
  switch (type) {
    case 'string':
      if (s.format === 'uri') return fc.constantFrom('http://127.0.0.1:1/collect', 'https://127.0.0.1:1/x')
      if (typeof s.pattern === 'string')
        return fc.stringMatching(new RegExp(s.pattern as string)).filter((v) => v.length <= 200)
      return fc.string({
        minLength: (s.minLength as number) ?? 0,
        maxLength: Math.max(40, (s.minLength as number) ?? 0),
      })
    case 'integer':
      return fc.integer({ min: (s.minimum as number) ?? -1000, max: (s.maximum as number) ?? 100_000 })
    case 'number':
      return fc.double({ min: (s.minimum as number) ?? -1e6, max: (s.maximum as number) ?? 1e6, noNaN: true })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return depth > 3 ? fc.constant([]) : fc.array(arb((s.items as Schema) ?? {}, depth + 1), { maxLength: 3 })
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>
      if (depth > 3 || !Object.keys(props).length)
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 2 })
      const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, arb(v, depth + 1, k)]))
      return fc.record(model, { requiredKeys: ((s.required as string[]) ?? []).filter((k) => k in props) })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** A valid value, or one mutated the ways clients get things wrong. */
function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<{ value: unknown; raw?: string; contentType?: string }> {
  const asObj = (v: unknown): Record<string, unknown> =>
    v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : {}
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((value) => ({ value })) },
    fc.tuple(valid, fc.nat()).map(([v, n]) => {
      const o = asObj(v)
      const keys = Object.keys(o)
      if (keys.length) delete o[keys[n % keys.length]!]
      return { value: o }
    }),
    fc.tuple(valid, fc.nat(), fc.jsonValue({ maxDepth: 2 })).map(([v, n, junk]) => {
      const o = asObj(v)
      const keys = Object.keys(o)
      o[keys.length ? keys[n % keys.length]! : 'x'] = junk
      return { value: o }
    }),
    fc
      .tuple(valid, fc.string({ minLength: 1, maxLength: 10 }))
      .map(([v, k]) => ({ value: { ...asObj(v), [`unknown_${k}`]: 1 } })),
    fc.jsonValue({ maxDepth: 3 }).map((value) => ({ value })),
    fc.string({ maxLength: 30 }).map((raw) => ({ value: undefined, raw: `{${raw}` })),
    valid.map((value) => ({ value, contentType: 'text/plain' })),
  )
}

type Op = (typeof httpOperations)[keyof typeof httpOperations]
let target: ServerTarget
let sentinel: string
let sentinelBefore: unknown
let live: string
let workspace = ''
const sniffer = new HttpSniffer()
const sent = { requests: 0, byStatus: new Map<number, number>() }

async function send(
  method: string,
  path: string,
  body?: { value: unknown; raw?: string; contentType?: string },
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = {}
  let text: string | undefined
  if (body && (body.raw !== undefined || body.value !== undefined)) {
    text = body.raw ?? JSON.stringify(body.value)
    headers['content-type'] = body.contentType ?? 'application/json'
  }
  const res = await target.fetch(new Request(new URL(path, target.baseUrl), { method, headers, body: text }))
  const type = res.headers.get('content-type')
  let parsed: unknown
  if ((type ?? '').startsWith('text/event-stream')) await res.body?.cancel()
  else {
    const t = await res.text()
    parsed = t === '' ? undefined : (type ?? '').includes('json') ? JSON.parse(t) : t
  }
  sent.requests++
  sent.byStatus.set(res.status, (sent.byStatus.get(res.status) ?? 0) + 1)
  sniffer.exchange({ method, path, status: res.status, contentType: type, body: parsed }, { invalid: true })
  return { status: res.status, body: parsed }
}

beforeAll(async () => {
  target = inProcessTarget({ workspace: { '.opencode/command/hello.md': 'Say hello to $1\n', 'a.txt': 'alpha\n' } })
  workspace = target.cwd
  const created = await send('POST', '/sessions', { value: { prompt: '!say keep me' } })
  sentinel = (created.body as { session_id: string }).session_id
  await target.server.deps.manager.peek(sentinel)!.idle()
  sentinelBefore = (await send('GET', `/sessions/${sentinel}`)).body
})
afterAll(async () => {
  await target?.close()
})

describe('schema-driven fuzzing of every operation', () => {
  const ops = Object.values(httpOperations) as Op[]
  for (const op of ops) {
    it(`${op.operationId} (${op.method} ${op.path})`, async () => {
      const item = ((doc.paths as Schema)[op.path] ?? {}) as Schema
      const operation = (item[op.method.toLowerCase()] ?? {}) as Schema
      const params = [...((item.parameters as Schema[]) ?? []), ...((operation.parameters as Schema[]) ?? [])].map(
        resolve,
      )
      const queryParams = params.filter((p) => p.in === 'query')
      const idArb = fc.oneof(
        { weight: 3, arbitrary: fc.constant(live) },
        fc.constantFrom('otter-20260101T000000Z-0000aaaa', '..', 'x%2F..'),
        fc.string({ maxLength: 20 }).map(encodeURIComponent),
      )
      const nameArb = fc.oneof(
        fc.constantFrom('hello', 'undo', 'nosuch'),
        fc.string({ maxLength: 20 }).map(encodeURIComponent),
      )
      const query = fc.record(
        Object.fromEntries(
          queryParams.map((p) => [
            p.name as string,
            fc.oneof(arb((p.schema as Schema) ?? {}).map(String), fc.string({ maxLength: 12 })),
          ]),
        ),
        { requiredKeys: [] },
      )
      const bodySchema = (
        resolve((operation.requestBody as Schema) ?? {}).content as Record<string, Schema> | undefined
      )?.['application/json']?.schema as Schema | undefined
      const bodyArb = bodySchema ? mutated(arb(bodySchema)) : fc.constant(undefined)
      // A fresh live session per operation: turns fuzzed into one do not pile up for the next.
      live = ((await send('POST', '/session', { value: {} })).body as { session_id: string }).session_id
      const before = sniffer.violations.length
      await fc.assert(
        fc.asyncProperty(idArb, nameArb, query, bodyArb, async (id, name, q, body) => {
          // The sentinel is only ever read, at the end; fuzzed ids never name it.
          const path = op.path.replace('{id}', id === sentinel ? live : id).replace('{name}', name)
          const qs = new URLSearchParams(q as Record<string, string>).toString()
          const r = await send(op.method, qs ? `${path}?${qs}` : path, body)
          const upstream =
            op.operationId === 'sessions.share' &&
            r.status === 502 &&
            (r.body as { error?: string })?.error === 'share_failed'
          if (r.status >= 500 && !upstream) throw new Error(`${r.status} ${JSON.stringify(r.body)}`)
        }),
        { seed: SEED, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
      )
      const out = sniffer.violations.slice(before).filter((v) => v.dir === 'out')
      expect(out, JSON.stringify(out.slice(0, 3))).toEqual([])
    }, 60_000)
  }

  it('afterwards: the server answers, the session held before is unchanged', async () => {
    expect((await send('GET', '/health')).status).toBe(200)
    // Everything but the idle clock, which each read resets.
    const untouched = (d: unknown): unknown => ({
      ...(d as object),
      summary: { ...(d as { summary: object }).summary, last_touched: 0 },
    })
    expect(untouched((await send('GET', `/sessions/${sentinel}`)).body)).toEqual(untouched(sentinelBefore))
    // Figures of the run (seed, requests, statuses), for the record.
    console.info(
      `fuzz: seed=${SEED} requests=${sent.requests} statuses=${JSON.stringify(Object.fromEntries([...sent.byStatus].sort((a, b) => a[0] - b[0])))}`,
    )
    expect(sent.requests).toBeGreaterThanOrEqual(RUNS_PER_OPERATION * ops.length)
  })
})
