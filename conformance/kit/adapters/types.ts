/**
 * What a transport adapter offers the abstract-scenario engine: the abstract actions a
 * scenario takes (open a session, prompt, cancel, answer a permission, steer, resume), and the
 * wire's frames turned back into observations (text, tool calls and results, permission
 * requests, turn ends, event ids). Every frame both ways goes through the spec sniffer.
 */
import type { Action, Decision, Outcome } from '../corpus/scenario.ts'
import type { TransportId } from '../corpus/ids.ts'
import type { KitViolation } from '../run/violations.ts'
import type { ResolvedProfile } from '../profiles/profile.ts'

export type ObservationKind =
  | 'text'
  | 'text_final'
  | 'thought'
  | 'tool_call'
  | 'tool_result'
  | 'permission'
  | 'turn_end'
  | 'replay_end'
  | 'client_request'
  | 'event'

export interface Observation {
  kind: ObservationKind
  /** The kit's name for the session (`main` unless a scenario opened more). */
  session: string
  /** Arrival order across the whole run, set by the engine. */
  seq?: number
  /** The wire's per-session event counter, when it has one (SSE `id:`, seed `eventId`, v1 `_meta`). */
  eventId?: number
  /** The wire's own name for what arrived (`agent_message_chunk`, `tool_call`, …): compared on replay. */
  wireType: string
  text?: string
  callId?: string
  tool?: string
  action?: Action
  args?: unknown
  ok?: boolean
  output?: string
  requestId?: string
  outcome?: Outcome
  /** Part of a replay the kit asked for (resume). */
  replay?: boolean
  /** Set by the engine: arrived after its turn had ended. */
  late?: boolean
  frame: unknown
}

export interface AdapterContext {
  /** The scenario's working directory (made by the kit). */
  workspace: string
  profile: ResolvedProfile
  /** Default wait for a reply, in ms (`--timeout`). */
  timeoutMs: number
  /** Extra wait for a freshly started target's first answer, in ms (`--startup-grace`). */
  startupGraceMs: number
  /** The model double's model id, when the kit started one. */
  doubleModel?: string
  /** Advertise the client file system and answer `fs/*` from the workspace (ACP v1). */
  clientFs?: boolean
}

export class Unsupported extends Error {
  override name = 'Unsupported'
}

export interface Adapter {
  readonly transport: TransportId
  /** Capabilities the agent advertised at handshake (`load-session`, `event-ids`, `resume`, …). */
  capabilities(): ReadonlySet<string>
  /** Open a session (the handshake happens on the first one). */
  open(session: string): Promise<void>
  prompt(session: string, text: string): Promise<void>
  cancel(session: string): Promise<void>
  steer(session: string, text: string): Promise<void>
  answer(session: string, requestId: string, decision: Decision): Promise<void>
  /** Ask for the events after `afterId` again; replayed observations carry `replay: true`. */
  resume(session: string, afterId: number): Promise<void>
  next(ms: number): Promise<Observation | undefined>
  violations(): KitViolation[]
  /** The implementation's name and version, when its handshake says (ACP `agentInfo`). */
  agent?(): { name: string; version: string } | undefined
  /** Diagnostics for a failure report (the last frames, the peer's stderr tail). */
  transcript(): string[]
  dispose(): Promise<void>
}

/** Decision → ACP v1 permission option kind. */
export const OPTION_KIND: Record<Decision, string> = {
  allow: 'allow_once',
  always: 'allow_always',
  deny: 'reject_once',
  never: 'reject_always',
}
