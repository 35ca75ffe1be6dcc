/**
 * Expected-failures files: the requirements a target is known to fail, with the reason. A
 * listed failure is reported as expected; a listed requirement that passes fails the run as
 * stale, so the list shrinks as implementations improve (the MCP conformance runner's rule).
 *
 *   {"failures": [{"id": "acp.v1.session.load.replay", "transport": "acp-v1", "reason": "…"}]}
 *
 * or the same in YAML. `transport` is optional (every transport); `id` may be a glob.
 */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { z } from 'zod'
import { TRANSPORTS, globToRegExp, type TransportId } from '../corpus/ids.ts'

const File = z
  .object({
    failures: z.array(z.object({ id: z.string().min(1), transport: z.enum(TRANSPORTS).optional(), reason: z.string().min(1) }).strict()),
  })
  .strict()
export type ExpectedFailure = z.infer<typeof File>['failures'][number]

export function loadExpectedFailures(file: string): ExpectedFailure[] {
  const text = readFileSync(file, 'utf8')
  let raw: unknown
  try {
    raw = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text)
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`)
  }
  const r = File.safeParse(raw)
  if (!r.success) throw new Error(`${file}: not an expected-failures file: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`)
  return r.data.failures
}

/** The entry that excuses `id` on `transport`, if any. */
export function expectedFor(list: readonly ExpectedFailure[], id: string, transport: TransportId): ExpectedFailure | undefined {
  return list.find((e) => (e.transport === undefined || e.transport === transport) && globToRegExp(e.id).test(id))
}
