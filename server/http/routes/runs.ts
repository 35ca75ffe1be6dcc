/**
 * `GET /runs` and `GET /runs/cost` (docs/runs.md "Run history"), over the features' rollups
 * (server/runs/) over the manager's store: the same corpus, filters and bodies as `chimera mink runs [cost] --format
 * json`. The filters are parsed from the raw query by the rollups' own parser, so a malformed
 * `since` or `limit` is the document's `invalid_query` with the parameter named; a corpus that
 * cannot be read is `runs_cost_failed` (500).
 */
import { costRollup, listRuns } from '../../runs/rollup.ts'
import { parseRunsQuery, type RunsFilter } from '../../runs/query.ts'
import type { OperationHandlers } from '../app.ts'
import type { HttpDeps } from '../deps.ts'
import { jsonResponse } from '../errors.ts'

function filterOf(req: Request): RunsFilter {
  return parseRunsQuery(Object.fromEntries(new URL(req.url).searchParams))
}

export function runsHandlers(deps: HttpDeps): Pick<OperationHandlers, 'runs.list' | 'runs.cost'> {
  return {
    'runs.list': async ({ req }) => jsonResponse(200, await listRuns(deps.manager.store, filterOf(req))),
    'runs.cost': async ({ req }) => jsonResponse(200, await costRollup(deps.manager.store, filterOf(req))),
  }
}
