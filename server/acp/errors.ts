/**
 * How the ACP wires show the core's errors. `ACP_ERRORS` sorts every domain code
 * (specs/schemas/common.yaml `DomainErrorCode`) into what JSON-RPC can say about it: the client's
 * own mistake (`invalid_params`: an unknown or unconfigured model, an unknown mode, a busy
 * session, a message over the size limit), an unknown session (`not_found`), or the agent's own
 * failure (`internal`). Each dialect then renders those kinds in one exhaustive table of its own:
 * `V1_WIRE` (ACP v1: Invalid params, Resource not found, a masked Internal error) and `SEED_WIRE`
 * (the seed dialect: Invalid params, and `-32000 Agent error` with `{name, message}`; its
 * unknown session is `data.name: "SessionNotFound"`, specs/openrpc/acp-seed.openrpc.yaml).
 */
import { ACP_SEED_ERRORS } from '../../generated/acp/seed-constants.gen.ts'
import { ChimeraError, type DomainErrorCode } from '../errors.ts'
import {
  CODES,
  maskInternal,
  RpcError,
  type InternalErrorMapper,
  type WireError,
} from '../../client/wire/jsonrpc/errors.ts'
import type { DialectName } from './dialect.ts'

export type AcpErrorKind = 'invalid_params' | 'not_found' | 'internal'

export const ACP_ERRORS: Record<DomainErrorCode, AcpErrorKind> = {
  args_must_be_list: 'invalid_params',
  command_invoke_failed: 'internal',
  command_not_found: 'invalid_params',
  invalid_cursor: 'invalid_params',
  invalid_event: 'internal',
  invalid_meta: 'internal',
  invalid_query: 'invalid_params',
  invalid_session_id: 'not_found',
  invalid_share: 'invalid_params',
  invalid_summary: 'internal',
  kwargs_must_be_object: 'invalid_params',
  message_too_large: 'invalid_params',
  missing_session_id: 'invalid_params',
  model_unavailable: 'invalid_params',
  prompt_not_recorded: 'internal',
  runs_cost_failed: 'internal',
  seq_mismatch: 'internal',
  session_busy: 'invalid_params',
  session_closed: 'internal',
  session_exists: 'internal',
  session_not_found: 'not_found',
  share_failed: 'internal',
  store_full: 'internal',
  store_unavailable: 'internal',
  unknown_mode: 'invalid_params',
  unknown_model: 'invalid_params',
}

/**
 * A client mistake on either wire: Invalid params, the reason in `data.detail` (a coded one also
 * in `data.error`); a mistake in named parameters (`detail` as `{path, message}` rows: a listing
 * cursor) as `data.issues`, the form of every other Invalid params of these wires.
 */
const invalidParams = (e: ChimeraError): WireError => ({
  code: CODES.invalidParams,
  message: 'Invalid params',
  data:
    e.code === 'message_too_large' || e.code === 'session_busy'
      ? { error: e.code, detail: e.message }
      : isIssueRows(e.detail)
        ? { issues: e.detail }
        : { detail: e.message },
})

const isIssueRows = (d: unknown): d is { path: string; message: string }[] =>
  Array.isArray(d) &&
  d.length > 0 &&
  d.every((r) => typeof r === 'object' && r !== null && typeof (r as { path?: unknown }).path === 'string')

/** The seed's agent error: `-32000` with `{name, message}` (the stack stays in the log). */
const seedAgentError = (name: string, message: string): WireError => ({
  code: ACP_SEED_ERRORS.ApplicationError,
  message: 'Agent error',
  data: { name, message },
})

/** `store_full` → `StoreFull`: the seed's `data.name` of a domain error. */
const pascal = (code: DomainErrorCode): string => code.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase())

type WireTable = Record<AcpErrorKind, (e: ChimeraError) => WireError>

export const V1_WIRE: WireTable = {
  invalid_params: invalidParams,
  not_found: (e) => ({ code: CODES.resourceNotFound, message: 'Resource not found', data: { sessionId: e.resource } }),
  internal: maskInternal,
}

export const SEED_WIRE: WireTable = {
  invalid_params: invalidParams,
  not_found: (e) => seedAgentError('SessionNotFound', e.message),
  internal: (e) => seedAgentError(pascal(e.code), e.message),
}

const WIRES: Record<DialectName, WireTable> = { 'acp-v1': V1_WIRE, seed: SEED_WIRE }

/**
 * A domain error the client should see as such (its mistake, an unknown session), as `dialect`
 * shows it; undefined for anything else (the dialect's `internalError` answers that).
 */
export function acpError(err: unknown, dialect: DialectName): RpcError | undefined {
  if (!ChimeraError.is(err)) return undefined
  const kind = ACP_ERRORS[err.code]
  if (kind === 'internal') return undefined
  const w = WIRES[dialect][kind](err)
  return new RpcError(w.code, w.message, w.data)
}

/** ACP v1: any other failure is Internal error with the message masked. */
export const v1InternalError: InternalErrorMapper = (err) =>
  ChimeraError.is(err) ? V1_WIRE[ACP_ERRORS[err.code]](err) : maskInternal(err)

/** The seed dialect: any other failure is an agent error naming it (`data.name`: the domain code, or the class). */
export const seedInternalError: InternalErrorMapper = (err) =>
  ChimeraError.is(err)
    ? SEED_WIRE[ACP_ERRORS[err.code]](err)
    : seedAgentError(err instanceof Error ? err.name : 'Error', err instanceof Error ? err.message : String(err))
