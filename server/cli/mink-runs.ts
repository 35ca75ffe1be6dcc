/** The work of `chimera mink runs` and `chimera mink runs cost` (see mink.ts). */
import { ChimeraError } from '../errors.ts'
import { parseRunsQuery, type RunsFilter } from '../runs/query.ts'
import { costRollup, listRuns } from '../runs/rollup.ts'
import { withConfiguredStore } from '../store/open.ts'
import { chimeraHome } from '../store/paths.ts'
import { UsageError } from './args.ts'
import { output } from './output.ts'
import { table } from './table.ts'

interface FilterArgs {
  since?: string
  model?: string
  limit?: string
}

function filter(args: FilterArgs): RunsFilter {
  try {
    return parseRunsQuery({ since: args.since, model: args.model, limit: args.limit })
  } catch (err) {
    if (ChimeraError.is(err, 'invalid_query'))
      throw new UsageError(err.message.replace(/^(since|limit|model)\b/, '--$1'))
    throw err
  }
}

const result = (s: boolean | null): string => (s === true ? 'ok' : s === false ? 'failed' : '-')
const usd = (v: number): string => `$${v}`
const skippedLine = (n: number | undefined): string =>
  n ? `\n(${n} damaged session director${n === 1 ? 'y' : 'ies'} skipped)` : ''

export async function runsList(args: FilterArgs & { json: boolean }): Promise<void> {
  const r = await withConfiguredStore(chimeraHome(), (store) => listRuns(store, filter(args)))
  if (args.json) return output(JSON.stringify(r, null, 2))
  if (r.runs.length === 0) return output(`no runs${skippedLine(r.skipped_dirs)}`)
  const rows = r.runs.map((x) => [
    x.run_id,
    x.started_at,
    x.source,
    x.model,
    result(x.success),
    usd(x.cost_usd),
    x.steps,
    x.tool_calls,
    x.prompt,
  ])
  output(
    `${table(['RUN', 'STARTED', 'SOURCE', 'MODEL', 'RESULT', 'COST', 'STEPS', 'TOOLS', 'PROMPT'], rows, [80, 30, 8, 40, 8, 14, 8, 8, 50])}\n${r.total_runs} run${r.total_runs === 1 ? '' : 's'}${skippedLine(r.skipped_dirs)}`,
  )
}

export async function runsCost(args: FilterArgs & { format: string }): Promise<void> {
  const r = await withConfiguredStore(chimeraHome(), (store) => costRollup(store, filter(args)))
  if (args.format === 'json') return output(JSON.stringify(r, null, 2))
  const t = r.totals
  const totals = table(
    ['RUNS', 'OK', 'FAILED', 'COST', 'TOKENS', 'INPUT', 'OUTPUT', 'CACHE', 'AVG', 'P50', 'P95'],
    [
      [
        t.runs,
        t.successful_runs,
        t.failed_runs,
        usd(t.cost_usd),
        t.tokens,
        t.input_tokens,
        t.output_tokens,
        t.cache_tokens,
        usd(t.avg_cost_usd),
        usd(t.p50_cost_usd),
        usd(t.p95_cost_usd),
      ],
    ],
  )
  const models = Object.entries(r.by_model)
    .sort(([, a], [, b]) => b.cost_usd - a.cost_usd)
    .map(([m, v]) => [m, v.runs, usd(v.cost_usd), v.tokens])
  const byModel = models.length ? `\n\n${table(['MODEL', 'RUNS', 'COST', 'TOKENS'], models, [60])}` : ''
  const filters = [
    r.filters.since !== null ? `since ${r.filters.since}` : '',
    r.filters.model !== null ? `model ~ ${r.filters.model}` : '',
  ]
    .filter(Boolean)
    .join(', ')
  output(`${totals}${byModel}${filters ? `\n\nfilters: ${filters}` : ''}${skippedLine(r.skipped_dirs)}`)
}
