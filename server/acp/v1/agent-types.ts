/**
 * The v1 agent's types: the handler table it must fill (checked against the generated method
 * table), its options, the client capabilities it reads, and an attachment (a session this
 * connection has open, with its event pump and the permission requests it asked).
 */
import type { acpV1Methods } from '../../../generated/acp/v1-methods.gen.ts'
import type { SessionManager } from '../../core/manager.ts'
import type { Session } from '../../core/session.ts'
import type { Connection } from '../../../client/wire/jsonrpc/connection.ts'
import type { HandlersFor, Inbound } from '../../jsonrpc/dispatcher.ts'
import type { Logger } from '../../log.ts'
import type { Tool } from '../../tools/types.ts'
import type { BridgeStatus } from '../../../generated/schemas.gen.ts'
import type { AgentName } from '../dialect.ts'
import type { EventPump } from '../event-pump.ts'
import type { ClientFs } from './client-tools.ts'
import type { V1MapContext } from './event-map.ts'
import type { SessionMcp } from './mcp-attach.ts'

export type V1Table = typeof acpV1Methods
/** The ferret dialect's extension methods: served only when the agent is ferret. */
export type FerretMethods = Extract<Inbound<V1Table>, `_ferret/${string}`>
/**
 * Inbound methods of the v1 table this agent does not serve (Method not found), each on purpose:
 * `initialize` is the dialect's (v1-dialect.ts); `$/cancel_request` is the connection's; `logout`
 * and `session/delete` are not advertised in `initialize` (no logout capability, no delete).
 */
type V1Unserved = 'initialize' | '$/cancel_request' | 'logout' | 'session/delete'
/** Every other inbound method has a handler of its generated type (a new one in the spec fails to compile). */
export type V1Handlers = HandlersFor<V1Table, Exclude<Inbound<V1Table>, V1Unserved | FerretMethods>> &
  Partial<HandlersFor<V1Table, FerretMethods>>

export interface V1AgentOptions {
  agent: AgentName
  conn: Connection
  manager: SessionManager
  logger: Logger
  /** This build's version (the MCP client introduces itself with it). */
  version?: string
  /** The process's cloud bridge (docs/bridge.md); absent: none configured. */
  bridge?: () => BridgeStatus
  /** A network connection: its end leaves the sessions as they are (DialectContext.detach). */
  detach?: boolean
}

export interface Attachment {
  session: Session
  pump: EventPump
  map: V1MapContext
  /** Permission requests asked of the client, by core request id. */
  asks: Map<string, AbortController>
  /** Prompts this client sent: their user message is its own, not echoed back live. */
  own: Set<string>
  /** Writes to the client (pump deliveries, replays) run one after another through this chain. */
  queue: Promise<unknown>
  /** The last event seq the pump has written. */
  upTo: number
  /** The MCP servers the client passed for this session (their tools are the session's extra tools). */
  mcp?: SessionMcp
  /** The client's file system and terminal, when the session's file tools go through them. */
  tools?: ReadonlyMap<string, Tool>
}

/** The client capabilities this agent reads from `initialize`. */
export interface V1ClientCaps {
  fs?: ClientFs
  terminal?: boolean
  _meta?: Record<string, unknown> | null
}
