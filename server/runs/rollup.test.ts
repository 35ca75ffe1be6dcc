/**
 * Run rollups over a generated event-log corpus: the document's own example reproduced, a
 * generated corpus checked against a hand computation (figures in the comments) and against an
 * independent recomputation, the filters, newest-first order, damaged directories skipped and
 * counted, hostile model names, and the `invalid_query` / `runs_cost_failed` errors.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileEventStore } from '../store/file-store.ts'
import { parseRunsQuery } from './query.ts'
import { ChimeraError } from '../errors.ts'
import { costRollup, listRuns, percentile } from './rollup.ts'

let root: string
beforeEach(() => {
  root = join(mkdtempSync(join(tmpdir(), 'chimera-runs-')), 'eventlog')
  mkdirSync(root)
})
afterEach(() => rmSync(join(root, '..'), { recursive: true, force: true }))
/** The rollups read through the store interface: the file store over `dir`. */
const store = (dir: string) => new FileEventStore({ root: dir })

const NOW = new Date('2026-04-25T12:00:00Z')
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString()
const id = (prefix: string, n: number) =>
  `${prefix}-20260425T000000Z-${String(n).padStart(8, '0')}-0000-4000-8000-000000000000`

function run(runId: string, summary: Record<string, unknown>): void {
  mkdirSync(join(root, runId))
  writeFileSync(join(root, runId, 'summary.json'), JSON.stringify({ session_id: runId, ...summary }))
  // Events are never read by the rollup: make one unreadable to prove it.
  writeFileSync(join(root, runId, 'event-000001-user_message.json'), '{not json')
}

const usage = (input: number, output: number, cache: number, total?: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_tokens: cache,
  ...(total !== undefined ? { total_tokens: total } : {}),
})

describe('the cost rollup', () => {
  it("reproduces the document's example: 4 runs, $0.22, 3800 tokens, avg 0.055, p50 0.05, p95 0.12", async () => {
    run('otter-20260425T120300-aaaa1111', {
      started_at: '2026-04-25T12:03:00Z',
      ended_at: '2026-04-25T12:03:30Z',
      model: 'glm-5.1:cloud',
      prompt: 'do the thing',
      success: true,
      cost_usd: 0.07,
      steps: 4,
      tool_calls: 3,
      usage: usage(800, 350, 50),
    })
    run('otter-20260425T110000-bbbb2222', {
      started_at: '2026-04-25T11:00:00Z',
      model: 'glm-5.1:cloud',
      success: true,
      cost_usd: 0.03,
      steps: 2,
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 600 },
    })
    run('mink-20260425T100000-cccc3333', {
      started_at: '2026-04-25T10:00:00Z',
      model: 'claude-sonnet-4-6',
      success: false,
      cost_usd: 0.12,
      steps: 9,
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 1000 },
    })
    run('mink-20260425T090000-dddd4444', {
      started_at: '2026-04-25T09:00:00Z',
      model: 'claude-sonnet-4-6',
      success: true,
      cost_usd: 0,
      steps: 1,
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 1000 },
    })
    const r = await costRollup(store(root))
    expect(r).toMatchObject({
      total_runs: 4,
      total_cost: 0.22,
      total_tokens: 3800,
      by_model: {
        'glm-5.1:cloud': { runs: 2, cost_usd: 0.1, tokens: 1800 },
        'claude-sonnet-4-6': { runs: 2, cost_usd: 0.12, tokens: 2000 },
      },
      totals: {
        runs: 4,
        successful_runs: 3,
        failed_runs: 1,
        cost_usd: 0.22,
        tokens: 3800,
        input_tokens: 800,
        output_tokens: 350,
        cache_tokens: 50,
        avg_cost_usd: 0.055,
        p50_cost_usd: 0.05,
        p95_cost_usd: 0.12,
      },
      filters: { since: null, model: null },
    })
    expect(r.by_run[0]).toEqual({
      run_id: 'otter-20260425T120300-aaaa1111',
      started_at: '2026-04-25T12:03:00Z',
      model: 'glm-5.1:cloud',
      cost_usd: 0.07,
      total_tokens: 1200,
      input_tokens: 800,
      output_tokens: 350,
      cache_tokens: 50,
      success: true,
      steps: 4,
      source: 'otter',
    })
    const list = await listRuns(store(root))
    expect(list.runs[0]).toEqual({
      run_id: 'otter-20260425T120300-aaaa1111',
      started_at: '2026-04-25T12:03:00Z',
      ended_at: '2026-04-25T12:03:30Z',
      model: 'glm-5.1:cloud',
      prompt: 'do the thing',
      success: true,
      cost_usd: 0.07,
      steps: 4,
      tool_calls: 3,
      source: 'otter',
    })
  })

  /**
   * The generated corpus: runs i = 1..10, started i hours before NOW, cost 0.01·i, usage
   * 60·i in / 30·i out / 10·i cache (total 100·i), successful when i is even, model claude for
   * i ∈ {3, 6, 9} and glm otherwise, source otter for odd i, mink for i ∈ {2, 6, 10}, ferret for
   * i ∈ {4, 8}; plus 3 damaged directories and 2 that are not runs.
   *
   * By hand: total cost 0.01·(1+…+10) = 0.55; tokens 100·55 = 5500 (in 3300, out 1650, cache
   * 550); successful 5, failed 5; avg 0.055; sorted costs 0.01…0.10, N = 10:
   * p50: h = 11·0.5 = 5.5 → 0.05 + 0.5·0.01 = 0.055; p95: h = 10.45 ≥ N → 0.10.
   * claude: 3 runs, 0.03+0.06+0.09 = 0.18, 1800 tokens; glm: 7 runs, 0.37, 3700 tokens.
   * limit 4 (newest: i = 1..4): cost 0.10, p50 h = 2.5 → 0.025, p95 h = 4.75 ≥ 4 → 0.04.
   * since 5h (i ≤ 5) and model "CLAUDE": only i = 3: cost 0.03, 300 tokens.
   */
  function generated(): void {
    for (let i = 1; i <= 10; i++) {
      const source = i % 2 ? 'otter' : i === 4 || i === 8 ? 'ferret' : 'mink'
      run(id(source, i), {
        started_at: hoursAgo(i),
        model: i % 3 === 0 ? 'claude-sonnet-4-6' : 'glm-5.1:cloud',
        prompt: `run ${i}`,
        success: i % 2 === 0,
        cost_usd: 0.01 * i,
        steps: i,
        tool_calls: 2 * i,
        usage: usage(60 * i, 30 * i, 10 * i, 100 * i),
      })
    }
    mkdirSync(join(root, id('otter', 91))) // no summary
    mkdirSync(join(root, id('mink', 92)))
    writeFileSync(join(root, id('mink', 92), 'summary.json'), '{"session_id": ') // torn
    run(id('ferret', 93), { session_id: 'ferret-someone-else', started_at: hoursAgo(1) }) // not its own
    mkdirSync(join(root, 'quarantine'))
    writeFileSync(join(root, 'notes.txt'), 'not a run')
  }

  it('rolls up a generated corpus exactly as computed by hand', async () => {
    generated()
    const r = await costRollup(store(root), parseRunsQuery({}, NOW))
    expect(r.skipped_dirs).toBe(3)
    expect(r.total_runs).toBe(10)
    expect(r.total_cost).toBe(0.55)
    expect(r.total_tokens).toBe(5500)
    expect(r.totals).toEqual({
      runs: 10,
      successful_runs: 5,
      failed_runs: 5,
      cost_usd: 0.55,
      tokens: 5500,
      input_tokens: 3300,
      output_tokens: 1650,
      cache_tokens: 550,
      avg_cost_usd: 0.055,
      p50_cost_usd: 0.055,
      p95_cost_usd: 0.1,
    })
    expect(r.by_model).toEqual({
      'glm-5.1:cloud': { runs: 7, cost_usd: 0.37, tokens: 3700 },
      'claude-sonnet-4-6': { runs: 3, cost_usd: 0.18, tokens: 1800 },
    })
    expect(r.by_run.map((x) => x.run_id)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => id(i % 2 ? 'otter' : i === 4 || i === 8 ? 'ferret' : 'mink', i)),
    )
    expect(r.by_run.map((x) => x.source)).toEqual([
      'otter',
      'mink',
      'otter',
      'ferret',
      'otter',
      'mink',
      'otter',
      'ferret',
      'otter',
      'mink',
    ])

    const newest4 = await costRollup(store(root), parseRunsQuery({ limit: '4' }, NOW))
    expect(newest4.totals).toMatchObject({
      runs: 4,
      cost_usd: 0.1,
      p50_cost_usd: 0.025,
      p95_cost_usd: 0.04,
      successful_runs: 2,
      failed_runs: 2,
    })

    const filtered = await costRollup(store(root), parseRunsQuery({ since: '5h', model: 'CLAUDE' }, NOW))
    expect(filtered).toMatchObject({
      total_runs: 1,
      total_cost: 0.03,
      total_tokens: 300,
      filters: { since: '5h', model: 'CLAUDE' },
    })
  })

  it('agrees with an independent recomputation on a larger random corpus', async () => {
    let seed = 7
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    const expected: { cost: number; tokens: number; ok: boolean; model: string; t: number }[] = []
    for (let i = 0; i < 300; i++) {
      const cost = Math.round(rand() * 1e6) / 1e6
      const tokens = Math.floor(rand() * 50_000)
      const ok = rand() < 0.7
      const model = ['gpt-4o', 'claude-sonnet-4-6', 'glm-5.1:cloud', 'offline'][Math.floor(rand() * 4)]!
      const t = Math.floor(rand() * 24 * 30)
      expected.push({ cost, tokens, ok, model, t })
      run(id(['otter', 'ferret', 'mink'][i % 3]!, i), {
        started_at: hoursAgo(t + i / 1000),
        model,
        success: ok,
        cost_usd: cost,
        usage: { input_tokens: tokens, output_tokens: 0, total_tokens: tokens },
      })
    }
    const r = await costRollup(store(root), parseRunsQuery({ since: '7d', model: 'o' }, NOW))
    const sel = expected.filter((e) => e.t < 24 * 7 && e.model.includes('o'))
    const sorted = sel.map((e) => e.cost).sort((a, b) => a - b)
    // Type 6 by its textbook definition, written out separately from the implementation.
    const q = (p: number) => {
      const pos = (sorted.length + 1) * p
      const k = Math.floor(pos)
      if (k < 1) return sorted[0]!
      if (k >= sorted.length) return sorted.at(-1)!
      return sorted[k - 1]! + (pos - k) * (sorted[k]! - sorted[k - 1]!)
    }
    const round = (x: number) => Math.round(x * 1e10) / 1e10
    expect(r.total_runs).toBe(sel.length)
    expect(r.totals.successful_runs).toBe(sel.filter((e) => e.ok).length)
    expect(r.total_tokens).toBe(sel.reduce((a, e) => a + e.tokens, 0))
    expect(r.total_cost).toBeCloseTo(
      sel.reduce((a, e) => a + e.cost, 0),
      9,
    )
    expect(r.totals.p50_cost_usd).toBe(round(q(0.5)))
    expect(r.totals.p95_cost_usd).toBe(round(q(0.95)))
    expect(Object.keys(r.by_model).sort()).toEqual([...new Set(sel.map((e) => e.model))].sort())
  })

  it('keeps a model named __proto__ as data', async () => {
    run(id('otter', 1), { started_at: hoursAgo(1), model: '__proto__', cost_usd: 1 })
    const r = await costRollup(store(root))
    expect(Object.hasOwn(r.by_model, '__proto__')).toBe(true)
    expect(JSON.parse(JSON.stringify(r)).by_model.__proto__).toEqual({ runs: 1, cost_usd: 1, tokens: 0 })
    expect(({} as Record<string, unknown>).runs).toBeUndefined()
  })

  it('an empty or missing event log is an empty rollup', async () => {
    expect(await costRollup(store(join(root, 'nope')))).toMatchObject({
      total_runs: 0,
      total_cost: 0,
      by_model: {},
      by_run: [],
      totals: { runs: 0, avg_cost_usd: 0, p50_cost_usd: 0, p95_cost_usd: 0 },
    })
    expect(await listRuns(store(root))).toEqual({ total_runs: 0, skipped_dirs: 0, runs: [] })
  })
})

describe('filters and errors', () => {
  it('parses since, model and limit, and refuses malformed values with invalid_query', () => {
    expect(parseRunsQuery({ since: '24h' }, NOW).since?.toISOString()).toBe(hoursAgo(24))
    expect(parseRunsQuery({ since: '2026-04-20' }, NOW).since?.toISOString()).toBe('2026-04-20T00:00:00.000Z')
    expect(parseRunsQuery({ model: 'all' }, NOW)).toEqual({})
    expect(parseRunsQuery({ model: 'GLM', limit: '50' }, NOW)).toEqual({ model: 'glm', modelText: 'GLM', limit: 50 })
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ since: 'yesterday' }, /^since: invalid since value "yesterday"/],
      [{ since: '2026-02-30' }, /^since: invalid since value/],
      [{ limit: '1.5' }, /^limit must be an integer/],
      [{ limit: '0' }, /^limit must be an integer/],
      [{ limit: 'ten' }, /^limit must be an integer/],
      [{ limit: '' }, /^limit must be an integer/],
      [{ model: ['a', 'b'] }, /^model must be given once/],
    ]
    for (const [q, message] of bad) {
      try {
        parseRunsQuery(q, NOW)
        expect.fail(`accepted ${JSON.stringify(q)}`)
      } catch (err) {
        expect(err).toBeInstanceOf(ChimeraError)
        expect((err as ChimeraError).code).toBe('invalid_query')
        expect((err as ChimeraError).detail).toMatch(message)
      }
    }
  })

  it('an event log that cannot be read is runs_cost_failed', async () => {
    const file = join(root, '..', 'not-a-dir')
    writeFileSync(file, '')
    await expect(costRollup(store(file))).rejects.toMatchObject({ code: 'runs_cost_failed' })
  })

  it('a store that says what went wrong keeps its word (Redis unavailable stays store_unavailable: 503, not runs_cost_failed)', async () => {
    const down = new ChimeraError('store_unavailable', 'the Redis store is unavailable')
    const unavailable = Object.assign(store(root), {
      // eslint-disable-next-line require-yield
      async *scanSummaries(): AsyncGenerator<never> {
        throw down
      },
    })
    await expect(costRollup(unavailable)).rejects.toBe(down)
  })

  it('percentile edge cases', () => {
    expect(percentile([], 0.5)).toBe(0)
    expect(percentile([3], 0.95)).toBe(3)
    expect(percentile([1, 2], 0.5)).toBe(1.5)
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3)
  })
})
