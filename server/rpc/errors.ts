/**
 * How the JSON-lines RPC shows a failed command (specs/asyncapi/rpc.asyncapi.yaml
 * `RpcResponse`): `success: false` and the error's message in `error`. `RPC_ERRORS` says, for
 * every domain code (specs/schemas/common.yaml `DomainErrorCode`), whether the failure is the
 * client's to fix (`client`: answered only) or the agent's own (`agent`: answered and logged).
 * A handler's own refusal (`RpcCommandError`) is the client's; anything else is the agent's.
 */
import { ChimeraError, type DomainErrorCode } from '../errors.ts'

export type RpcErrorKind = 'client' | 'agent'

export const RPC_ERRORS: Record<DomainErrorCode, RpcErrorKind> = {
  args_must_be_list: 'client',
  command_invoke_failed: 'agent',
  command_not_found: 'client',
  invalid_cursor: 'client',
  invalid_event: 'agent',
  invalid_meta: 'agent',
  invalid_query: 'client',
  invalid_session_id: 'client',
  invalid_share: 'client',
  invalid_summary: 'agent',
  kwargs_must_be_object: 'client',
  message_too_large: 'client',
  missing_session_id: 'client',
  model_unavailable: 'client',
  prompt_not_recorded: 'agent',
  runs_cost_failed: 'agent',
  seq_mismatch: 'agent',
  session_busy: 'client',
  session_closed: 'agent',
  session_exists: 'agent',
  session_not_found: 'client',
  share_failed: 'agent',
  store_full: 'agent',
  store_unavailable: 'agent',
  unknown_mode: 'client',
  unknown_model: 'client',
}

/** A handler's refusal of its command: the client's (not logged). */
export class RpcCommandError extends Error {
  override name = 'RpcCommandError'
}

/** The response's `error` text, and whether the failure is the agent's own (to log). */
export function rpcFailure(err: unknown): { error: string; agent: boolean } {
  const error = err instanceof Error ? err.message : String(err)
  if (err instanceof RpcCommandError) return { error, agent: false }
  if (ChimeraError.is(err)) return { error, agent: RPC_ERRORS[err.code] === 'agent' }
  return { error, agent: true }
}
