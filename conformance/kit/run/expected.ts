/**
 * Expected-failures files: the requirements a target is known to fail, each with the failure
 * it is known to fail with and the reason. They are exact (docs/decisions/0260):
 *
 *   {"failures": [{"id": "acp.jsonrpc.id-type", "transport": "acp-v1",
 *                  "failure": "expected .*-32600", "reason": "answers an object id with -32700"}]}
 *
 * or the same in YAML. `id` names one requirement (or a contract-violation rule such as
 * `acp.v1.wire.schema`), no globs; `transport` is optional (every transport it binds to);
 * `failure` is a regular expression the failure must match (its message, and each violation as
 * `<rule>: <problem>`). A result of a listed requirement is then:
 * - a failure matching the pattern: `xfail`;
 * - a failure that does not match it: a failure ("fails differently than listed");
 * - a pass: `stale` (the list must shrink), unless the entry is `"flaky": true` (its reason must
 *   say what varies from run to run);
 * and an entry that names no requirement of the corpus (on its transport), or whose every result
 * in a run was a skip, is a problem of the list that fails the run (`listProblems`).
 */
import { loadDataFile } from '../data-file.ts'
import * as z from 'zod'
import { ID_PATTERN, TRANSPORTS, type TransportId } from '../corpus/ids.ts'

const Entry = z
  .object({
    id: z.string().regex(ID_PATTERN, 'a requirement id or violation rule (dot-separated lowercase words, no globs)'),
    transport: z.enum(TRANSPORTS).optional(),
    failure: z
      .string()
      .min(1)
      .refine((p) => {
        try {
          new RegExp(p)
          return true
        } catch {
          return false
        }
      }, 'a regular expression'),
    reason: z.string().min(1),
    flaky: z.boolean().optional(),
  })
  .strict()
const File = z.object({ failures: z.array(Entry) }).strict()
export type ExpectedFailure = z.infer<typeof Entry>

export function loadExpectedFailures(file: string): ExpectedFailure[] {
  return loadDataFile(file, File, 'an expected-failures file').failures
}

/** What applyExpected reads and writes of a result. */
export interface Judged {
  id: string
  transport: TransportId
  status: string
  message?: string
  violations: readonly { rule: string; problem: string }[]
  expectedReason?: string
  expectedFailure?: string
}

/** The entry that names `r` on its transport: by requirement id, or by the rule of every violation that failed it. */
export function expectedFor(
  list: readonly ExpectedFailure[],
  r: Pick<Judged, 'id' | 'transport' | 'violations'>,
): ExpectedFailure | undefined {
  const onTransport = list.filter((e) => e.transport === undefined || e.transport === r.transport)
  return (
    onTransport.find((e) => e.id === r.id) ??
    (r.violations.length ? onTransport.find((e) => r.violations.every((v) => v.rule === e.id)) : undefined)
  )
}

/** The text an entry's `failure` pattern is matched against. */
export const failureText = (r: Pick<Judged, 'message' | 'violations'>): string =>
  [r.message ?? '', ...r.violations.map((v) => `${v.rule}: ${v.problem}`)].join('\n')

/** Applies the list to one result (see the file comment). */
export function applyExpected(r: Judged, list: readonly ExpectedFailure[]): void {
  const x = expectedFor(list, r)
  if (!x) return
  r.expectedReason = x.reason
  r.expectedFailure = x.failure
  if (r.status === 'fail') {
    if (new RegExp(x.failure).test(failureText(r))) r.status = 'xfail'
    else r.message = `fails differently than listed (the list expects /${x.failure}/: ${x.reason}): ${r.message ?? ''}`
  } else if (r.status === 'pass' && !x.flaky) {
    Object.assign(r, {
      status: 'stale',
      message: `listed as an expected failure (${x.reason}), but it passes: remove it from the list`,
    })
  }
}

export interface ListProblem {
  entry: ExpectedFailure
  problem: string
}

/**
 * Entries that cannot be checked: one naming no requirement (or rule) of the corpus on its
 * transport, and one whose results in this run were all skips. Entries for requirements this
 * run did not select (`--only`, `--transport`) are not judged.
 */
export function listProblems(
  list: readonly ExpectedFailure[],
  known: ReadonlyMap<string, readonly TransportId[]>,
  rules: ReadonlySet<string>,
  results: readonly Judged[],
): ListProblem[] {
  const out: ListProblem[] = []
  for (const entry of list) {
    const binds = known.get(entry.id)
    const exists =
      rules.has(entry.id) || (binds !== undefined && (entry.transport === undefined || binds.includes(entry.transport)))
    if (!exists) {
      out.push({
        entry,
        problem: binds
          ? `${entry.id} does not bind to ${entry.transport}`
          : `no requirement or rule ${entry.id} in the corpus`,
      })
      continue
    }
    const mine = results.filter((r) => expectedFor([entry], r) === entry)
    if (mine.length && mine.every((r) => r.status === 'skip' || r.status === 'na'))
      out.push({
        entry,
        problem: `only skipped in this run (${mine.map((r) => `${r.transport}: ${r.message ?? 'skipped'}`).join('; ')}), so it cannot be checked`,
      })
  }
  return out
}
