/**
 * Ferret's IDE-first event kinds on the v1 wire: `_ferret/session/update {sessionId, eventId,
 * kind, data}` (specs/openrpc/acp-v1.extensions.yaml), written only to clients that advertised
 * `clientCapabilities._meta["ferret/updates"]: true` (the official client drops unknown
 * `session/update` kinds). `data` is the canonical event's payload as is; `eventId` its `seq`.
 */
import type { FerretSessionUpdateParams } from '../../../generated/acp/v1-methods.gen.ts'
import type { AnyEvent } from '../../events/event-types.ts'

export const FERRET_UPDATE_KINDS: ReadonlySet<string> = new Set<FerretSessionUpdateParams['kind']>([
  'sandbox_violation',
  'approval_changed',
  'file_edit',
  'file_open',
  'notice',
])

/** The `_ferret/session/update` params of one event, or undefined for every other type. */
export function toFerretUpdate(e: AnyEvent): FerretSessionUpdateParams | undefined {
  if (!FERRET_UPDATE_KINDS.has(e.type)) return undefined
  return { sessionId: e.session_id, eventId: e.seq, kind: e.type as FerretSessionUpdateParams['kind'], data: e.data }
}
