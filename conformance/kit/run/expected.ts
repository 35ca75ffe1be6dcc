/**
 * Expected-failures files: the requirements a target is known to fail, with the reason. A
 * listed failure is reported as expected; a listed requirement that passes fails the run as
 * stale, so the list shrinks as implementations improve (the MCP conformance runner's rule).
 *
 *   {"failures": [{"id": "acp.v1.session.load.replay", "transport": "acp-v1", "reason": "…"}]}
 *
 * or the same in YAML. `transport` is optional (every transport); `id` may be a glob.
 * `"flaky": true` marks a requirement whose outcome on that target varies from run to run (for
 * example the order in which it reports concurrent tool calls): a failure is expected, and a
 * pass is a pass, not stale. Use it only with a reason that says what varies.
 */
import { loadDataFile } from '../data-file.ts'
import { z } from 'zod'
import { TRANSPORTS, globToRegExp, type TransportId } from '../corpus/ids.ts'

const File = z
  .object({
    failures: z.array(z.object({ id: z.string().min(1), transport: z.enum(TRANSPORTS).optional(), reason: z.string().min(1), flaky: z.boolean().optional() }).strict()),
  })
  .strict()
export type ExpectedFailure = z.infer<typeof File>['failures'][number]

export function loadExpectedFailures(file: string): ExpectedFailure[] {
  return loadDataFile(file, File, 'an expected-failures file').failures
}

/** The entry that excuses `id` on `transport`, if any. */
export function expectedFor(list: readonly ExpectedFailure[], id: string, transport: TransportId): ExpectedFailure | undefined {
  return list.find((e) => (e.transport === undefined || e.transport === transport) && globToRegExp(e.id).test(id))
}

/**
 * Applies the list to one result: a listed failure becomes `xfail`; a listed pass becomes
 * `stale` (the list must shrink), unless the entry is flaky.
 */
export function applyExpected(r: { id: string; transport: TransportId; status: string; expectedReason?: string; message?: string }, list: readonly ExpectedFailure[]): void {
  const x = expectedFor(list, r.id, r.transport)
  if (!x) return
  if (r.status === 'fail') Object.assign(r, { status: 'xfail', expectedReason: x.reason })
  else if (r.status === 'pass' && !x.flaky) Object.assign(r, { status: 'stale', expectedReason: x.reason, message: `listed as an expected failure (${x.reason}), but it passes: remove it from the list` })
}
