/**
 * `/runs` and `/runs/cost` (docs/runs.md "Cost rollups across persisted runs") as plain functions
 * over a store's sessions: the run list, and the cost rollup with its flat fields, `by_model`,
 * `by_run`, the `totals` block of `chimera mink runs cost --format json` and the filters. Dollar
 * figures are rounded to 10 decimal places (sums of binary floats would otherwise print as
 * 0.22000000000000003). Percentiles: see `percentile`.
 */
import type { components } from '../../generated/http/openapi.gen.d.ts'
import type { EventStore } from '../store/types.ts'
import { readRuns, type RunRecord } from './corpus.ts'
import { ChimeraError } from '../errors.ts'
import { runsFailed, type RunsFilter } from './query.ts'

export type RunsListResponse = components['schemas']['RunsListResponse']
export type RunsCostResponse = components['schemas']['RunsCostResponse']
export type RunRow = components['schemas']['RunRow']
export type RunCostRow = components['schemas']['RunCostRow']

const usd = (x: number): number => Math.round(x * 1e10) / 1e10

/**
 * The p-quantile (0 ≤ p ≤ 1) of `values` by the (N+1)p rule with linear interpolation between
 * the order statistics (Hyndman & Fan type 6; R `quantile(type = 6)`, Python's
 * `statistics.quantiles` default, Excel PERCENTILE.EXC), clamped to the smallest and largest
 * value; 0 for no values. The document's example (costs 0, 0.03, 0.07, 0.12) gives p50 0.05 and
 * p95 0.12 by this rule.
 */
export function percentile(values: readonly number[], p: number): number {
  const x = [...values].sort((a, b) => a - b)
  const n = x.length
  if (n === 0) return 0
  const h = (n + 1) * p
  if (h <= 1) return x[0]!
  if (h >= n) return x[n - 1]!
  const lo = Math.floor(h)
  return x[lo - 1]! + (h - lo) * (x[lo]! - x[lo - 1]!)
}

function row(r: RunRecord): RunRow {
  return {
    run_id: r.run_id,
    started_at: r.started_at,
    ended_at: r.ended_at,
    model: r.model,
    prompt: r.prompt,
    success: r.success,
    cost_usd: usd(r.cost_usd),
    steps: r.steps,
    tool_calls: r.tool_calls,
    source: r.source,
  }
}

function costRow(r: RunRecord): RunCostRow {
  return {
    run_id: r.run_id,
    started_at: r.started_at,
    model: r.model,
    cost_usd: usd(r.cost_usd),
    total_tokens: r.total_tokens,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    cache_tokens: r.cache_tokens,
    success: r.success,
    steps: r.steps,
    source: r.source,
  }
}

async function corpus(store: EventStore, filter: RunsFilter): Promise<{ runs: RunRecord[]; skipped: number }> {
  try {
    return await readRuns(store, filter)
  } catch (err) {
    if (ChimeraError.is(err)) throw err
    throw runsFailed((err as Error).message, err)
  }
}

/** `GET /runs`: one row per run, newest first. */
export async function listRuns(store: EventStore, filter: RunsFilter = {}): Promise<RunsListResponse> {
  const { runs, skipped } = await corpus(store, filter)
  return { total_runs: runs.length, skipped_dirs: skipped, runs: runs.map(row) }
}

/** `GET /runs/cost`: the rollup of the same runs. */
export async function costRollup(store: EventStore, filter: RunsFilter = {}): Promise<RunsCostResponse> {
  const { runs, skipped } = await corpus(store, filter)
  return rollUp(runs, skipped, filter)
}

/** The rollup of `runs` (already filtered and limited). */
export function rollUp(runs: readonly RunRecord[], skipped: number, filter: RunsFilter = {}): RunsCostResponse {
  // A Map, not an object literal: a model may be named `__proto__`.
  const byModel = new Map<string, { runs: number; cost_usd: number; tokens: number }>()
  let cost = 0
  let tokens = 0
  let input = 0
  let output = 0
  let cache = 0
  let ok = 0
  for (const r of runs) {
    let m = byModel.get(r.model)
    if (!m) byModel.set(r.model, (m = { runs: 0, cost_usd: 0, tokens: 0 }))
    m.runs++
    m.cost_usd += r.cost_usd
    m.tokens += r.total_tokens
    cost += r.cost_usd
    tokens += r.total_tokens
    input += r.input_tokens
    output += r.output_tokens
    cache += r.cache_tokens
    if (r.success === true) ok++
  }
  for (const m of byModel.values()) m.cost_usd = usd(m.cost_usd)
  const costs = runs.map((r) => r.cost_usd)
  return {
    total_runs: runs.length,
    skipped_dirs: skipped,
    total_cost: usd(cost),
    total_tokens: tokens,
    by_model: Object.fromEntries(byModel),
    by_run: runs.map(costRow),
    totals: {
      runs: runs.length,
      successful_runs: ok,
      failed_runs: runs.length - ok,
      cost_usd: usd(cost),
      tokens,
      input_tokens: input,
      output_tokens: output,
      cache_tokens: cache,
      avg_cost_usd: runs.length ? usd(cost / runs.length) : 0,
      p50_cost_usd: usd(percentile(costs, 0.5)),
      p95_cost_usd: usd(percentile(costs, 0.95)),
    },
    filters: { since: filter.sinceText ?? null, model: filter.modelText ?? null },
  }
}
