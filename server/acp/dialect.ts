/**
 * ACP dialects, negotiated per connection by `initialize` (docs/decisions/0003-acp-dialects.md):
 * the integer protocolVersion 1 (or a higher integer, answered with 1) selects the real ACP v1
 * wire; anything else (absent, "0.1", "0.2", 2) selects the seed wire of the agent that was
 * launched — `otter` (docs/zed.md) or `ferret` (docs/zed.md, a superset).
 */
import type { Dispatcher } from '../jsonrpc/dispatcher.ts'
import type { InternalErrorMapper, RpcError } from '../../client/wire/jsonrpc/errors.ts'
import type { Connection } from '../../client/wire/jsonrpc/connection.ts'
import type { SessionManager } from '../core/manager.ts'
import type { Logger } from '../log.ts'
import { ACP_V1_PROTOCOL_VERSION } from '../../generated/acp/v1-constants.gen.ts'

export type AgentName = 'otter' | 'ferret'
export type DialectName = 'acp-v1' | 'seed'

export interface Dialect {
  name: DialectName
  dispatcher: Dispatcher
  /** A domain error as this wire shows it to the client (server/acp/errors.ts), or undefined. */
  domainError: (err: unknown) => RpcError | undefined
  /** What the peer sees of any other failure. */
  internalError: InternalErrorMapper
  /** The input ended: let running turns finish (no client can answer any more), stop pumps. */
  end(): Promise<void>
}

/** What a dialect drives: the connection, the process's sessions, the log. */
export interface DialectContext {
  conn: Connection
  manager: SessionManager
  logger: Logger
  /**
   * The connection is one of several a session may have (a network client, which may drop and
   * come back): when it ends, its sessions go on as they were. Nothing is denied or refused for
   * lack of a client, running turns are not waited for, and the pumps stop at once.
   */
  detach?: boolean
}

/** Which wire an `initialize` request selects. */
export function negotiate(params: unknown): DialectName {
  const v =
    typeof params === 'object' && params !== null
      ? (params as { protocolVersion?: unknown }).protocolVersion
      : undefined
  if (v === ACP_V1_PROTOCOL_VERSION) return 'acp-v1'
  if (typeof v === 'number' && Number.isInteger(v) && v > 2) return 'acp-v1'
  return 'seed'
}
