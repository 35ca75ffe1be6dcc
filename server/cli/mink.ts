/**
 * `chimera mink runs [--since …] [--model …] [--limit …] [--json]` and
 * `chimera mink runs cost --format json|table`: the rollups of `GET /runs` and `GET /runs/cost`
 * over the otter, ferret and mink sessions under `$CHIMERA_HOME/eventlog` (server/runs/). A
 * malformed filter is a usage error (exit 2); an unreadable event log an error (exit 1).
 */
import { defineCommand } from 'citty'

const FILTERS = {
  since: {
    type: 'string',
    description: 'Only runs started after this: 7d, 24h, 30m, or an ISO-8601 date or date-time',
  },
  model: { type: 'string', description: 'Case-insensitive substring of the model name (all: no filter)' },
  limit: { type: 'string', description: 'Only the newest N runs' },
} as const

/** Set when `runs cost` ran: citty runs the parent's `run` after a subcommand's. */
let subcommandRan = false

const cost = defineCommand({
  meta: {
    name: 'cost',
    description: 'Cost rollup of the runs: totals, per model, per run, avg/p50/p95 (as GET /runs/cost)',
  },
  args: {
    ...FILTERS,
    format: {
      type: 'enum',
      options: ['table', 'json'],
      description: 'json: the GET /runs/cost body',
      default: 'table',
    },
  },
  run: async ({ args }) => {
    subcommandRan = true
    await (await import('./mink-runs.ts')).runsCost(args)
  },
})

const runs = defineCommand({
  meta: {
    name: 'runs',
    description: 'List persisted runs, newest first (as GET /runs); `runs cost` rolls up their cost',
  },
  args: {
    ...FILTERS,
    json: { type: 'boolean', description: 'Print the GET /runs body as JSON', default: false },
  },
  subCommands: { cost },
  run: async ({ args }) => {
    if (subcommandRan) return
    await (await import('./mink-runs.ts')).runsList(args)
  },
})

export default defineCommand({
  meta: { name: 'mink', description: 'The mink runner: rollups of persisted runs' },
  subCommands: { runs },
})
