/**
 * Which requirements cannot apply to ACP over the network (docs/decisions/0325). Every
 * requirement bound to `acp-v1` binds to `acp-http` and `acp-ws` too; one whose checks are about
 * the stdio byte stream or the agent's process is reported not applicable there (status `n/a`,
 * with the reason), never failed and never silently dropped:
 * - it sends raw bytes (`sendRaw`: newline framing, a byte-order mark, a line over the size
 *   limit, malformed envelopes the SDK's client transport would not send);
 * - it closes the agent's stdin (`closeInput`) or waits for the process to exit (`expectExit`):
 *   a network agent outlives its clients;
 * - it sends `initialize` twice on one stream: a network connection takes exactly one (the
 *   SDK's server transport refuses another: "Initialize not allowed on existing connection");
 *   a client initializes again on a new connection.
 * Steps that check another requirement (their `requirement` tag) are not counted: the kit runs
 * a transcript for its own requirement only.
 */
import type { CorpusEntry } from '../corpus/load.ts'
import { isAcpNet, type TransportId } from '../corpus/ids.ts'

const STDIO_ONLY_STEPS = [
  [
    'sendRaw',
    'it sends raw bytes to test the stdio stream (framing, envelopes); on the network the SDK transport frames each message',
  ],
  ['closeInput', "it closes the agent's stdin; a network connection has no stdin (its agent outlives the client)"],
  ['expectExit', "it checks the agent process's exit; a network agent outlives its clients"],
] as const

/** Why `entry` cannot apply on `transport`, or undefined when it applies. */
export function notApplicable(entry: CorpusEntry, transport: TransportId): string | undefined {
  if (!isAcpNet(transport) || entry.body.kind !== 'transcript') return undefined
  const steps = entry.body.transcript.steps.filter(
    (s) => !('requirement' in s && s.requirement && s.requirement !== entry.id),
  )
  for (const [step, why] of STDIO_ONLY_STEPS)
    if (steps.some((s) => step in s)) return `not applicable to ${transport}: ${why}`
  const inits = steps.filter((s) => 'send' in s && (s.send as { method?: unknown } | null)?.method === 'initialize')
  if (inits.length > 1)
    return `not applicable to ${transport}: it initializes twice on one stream; a network connection takes one initialize (a client initializes again on a new connection)`
  return undefined
}
