/**
 * Contract violations as the kit reports them: the frame (direction and text), the rule broken
 * (a requirement id of its own, so an expected-failures file can name it) and the spec location.
 */
import type { Violation } from '../../harness/sniffer.ts'
import type { TransportId } from '../corpus/ids.ts'

export interface KitViolation {
  /** Requirement id of the wire rule (`acp.v1.wire.schema`, `rpc.stdout.protocol-only`, …). */
  rule: string
  /** `in` = kit → implementation, `out` = implementation → kit. */
  dir: 'in' | 'out'
  /** The offending frame, as JSON text (cut at 600 characters). */
  frame: string
  problem: string
  /** Contract file and item, or the document rule for transport-level breaches. */
  spec: string
}

const STDOUT_RULE: Record<TransportId, { rule: string; spec: string }> = {
  'acp-v1': {
    rule: 'acp.stdio.stdout-protocol-only',
    spec: 'the ACP v1 transport conventions (docs/zed.md) (transports: stdout carries only ACP messages)',
  },
  'acp-otter': { rule: 'acp.stdio.stdout-protocol-only', spec: 'docs/zed.md Wire protocol (one JSON object per line)' },
  'acp-ferret': {
    rule: 'acp.stdio.stdout-protocol-only',
    spec: 'docs/zed.md Wire protocol (one JSON object per line)',
  },
  rpc: {
    rule: 'rpc.stdout.protocol-only',
    spec: 'specs/asyncapi/rpc.asyncapi.yaml info (nothing but these messages is written to stdout)',
  },
  http: { rule: 'http.wire.schema', spec: 'specs/openapi/chimera.openapi.yaml' },
  // The network wires have no stdout: the SDK's transport parses each message (never reached).
  'acp-http': { rule: 'acp.v1.wire.schema', spec: 'specs/vendor/acp/schema.v1.json' },
  'acp-ws': { rule: 'acp.v1.wire.schema', spec: 'specs/vendor/acp/schema.v1.json' },
}

function schemaRule(t: TransportId, v: Violation): string {
  if (t === 'acp-v1' || t === 'acp-http' || t === 'acp-ws') return 'acp.v1.wire.schema'
  if (t === 'acp-otter' || t === 'acp-ferret') return 'acp.seed.wire.schema'
  if (t === 'rpc') return 'rpc.wire.schema'
  return v.spec?.includes('asyncapi/sse') ? 'http.sse.wire.schema' : 'http.wire.schema'
}

const text = (m: unknown): string => (typeof m === 'string' ? m : (JSON.stringify(m) ?? String(m))).slice(0, 600)

/** Every rule a violation can carry (an expected-failures entry may name one). */
export const VIOLATION_RULES: ReadonlySet<string> = new Set([
  'acp.v1.wire.schema',
  'acp.seed.wire.schema',
  'rpc.wire.schema',
  'http.wire.schema',
  'http.sse.wire.schema',
  'rpc.stdout.protocol-only',
  'acp.stdio.stdout-protocol-only',
  'acp.v1.capabilities.respected',
  'acp.v1.tool-call.lifecycle',
  'rpc.turn.final-message',
])

export function toKitViolation(t: TransportId, v: Violation): KitViolation {
  if (/^stdout (carried a line that is not JSON|ended with an unterminated line)/.test(v.problem)) {
    return {
      rule: STDOUT_RULE[t].rule,
      dir: v.dir,
      frame: text(v.message),
      problem: v.problem,
      spec: STDOUT_RULE[t].spec,
    }
  }
  return { rule: schemaRule(t, v), dir: v.dir, frame: text(v.message), problem: v.problem, spec: v.spec ?? 'specs/' }
}

export function describeViolation(v: KitViolation): string {
  return `${v.rule}: ${v.dir === 'out' ? 'received' : 'sent'} ${v.frame.slice(0, 200)} — ${v.problem} (${v.spec})`
}
