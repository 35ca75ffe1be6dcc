/**
 * The update_plan tool (decision 0160): the model replaces its plan — the complete list of
 * entries each call, like Claude Code's TodoWrite or codex's update_plan. It changes no files;
 * the plan reaches every client as the `plan` event (ACP v1 `plan`, SSE `plan`, JSON-lines
 * `PlanEvent`), and the model gets a one-line summary back.
 */
import type { update_planInput } from '../../generated/tools/tools.gen.ts'
import { succeed } from './outcome.ts'
import type { PlanEntry, Tool } from './types.ts'

const MARK: Record<PlanEntry['status'], string> = { completed: '[x]', in_progress: '[~]', pending: '[ ]' }

/** The entries with their defaults filled in (priority: medium). */
export function planEntries(args: update_planInput): PlanEntry[] {
  return args.entries.map((e) => ({ content: e.content, priority: e.priority ?? 'medium', status: e.status }))
}

/** The update_plan tool. */
export const updatePlanTool: Tool<update_planInput> = {
  name: 'update_plan',
  // Every plan is its own call: `always` for one plan says nothing about the next.
  permissionKey: (args) => JSON.stringify(args.entries.map((e) => [e.content, e.status, e.priority ?? 'medium'])),
  async run(args, ctx) {
    const entries = planEntries(args)
    ctx.plan?.(entries)
    const done = entries.filter((e) => e.status === 'completed').length
    if (entries.length === 0) return succeed('plan cleared')
    const lines = entries.map((e) => `${MARK[e.status]} ${e.content}`)
    return succeed([`plan updated: ${done}/${entries.length} completed`, ...lines].join('\n'))
  },
}
