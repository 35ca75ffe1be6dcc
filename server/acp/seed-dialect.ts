/**
 * The seed wire of seeds/000 (otter) and seeds/002 (ferret): the seed method table filtered by
 * the launched agent's dialect, and the documents' error shape for agent failures (-32000 with
 * `{name, message}`; the stack stays in the log, see docs/decisions/0003-acp-dialects.md).
 */
import type { z } from 'zod'
import { acpSeedMethods, ACP_SEED_ERRORS, type InitializeMethodResultSchema } from '../../generated/acp/seed.gen.ts'
import { Dispatcher, type Handlers } from '../jsonrpc/dispatcher.ts'
import { SeedAgent } from './seed/agent.ts'
import type { InternalErrorMapper } from '../jsonrpc/errors.ts'
import type { AgentName, Dialect, DialectContext } from './dialect.ts'
import type { AgentInfo } from './v1-dialect.ts'

/** seeds/000 "Resume after disconnect": builds that ship `session/resume` report version 2. */
const OTTER_ACP_PROTOCOL_VERSION = 2
/** seeds/002 handshake example. */
const FERRET_ACP_PROTOCOL_VERSION = '0.2'

export const seedInternalError: InternalErrorMapper = (err) => ({
  code: ACP_SEED_ERRORS.ApplicationError,
  message: 'Agent error',
  data: { name: err instanceof Error ? err.name : 'Error', message: err instanceof Error ? err.message : String(err) },
})

/** `initialize` on the seed wire, in the launched agent's documented shape. */
export function seedInitialize(info: AgentInfo): z.input<typeof InitializeMethodResultSchema> {
  const agentCapabilities = {
    promptCapabilities: { text: true },
    sessionCapabilities: { cancel: true, resume: true },
    toolApproval: true,
    eventIds: true,
  }
  const otterCaps = { sessionFork: false, sessionList: true, permissionRequest: true, thinking: true, vision: false }
  if (info.agent === 'otter') {
    return {
      protocolVersion: OTTER_ACP_PROTOCOL_VERSION,
      serverInfo: { name: 'otter-acp', version: info.version },
      capabilities: otterCaps,
      agentCapabilities,
    }
  }
  return {
    protocolVersion: FERRET_ACP_PROTOCOL_VERSION,
    serverInfo: { name: 'ferret-acp', version: info.version },
    capabilities: { ...otterCaps, sandbox: true, approval: true, streaming: true, cancellation: true, bridge: true },
    agentCapabilities,
  }
}

export function createSeedDialect(agent: AgentName, info: AgentInfo, ctx: DialectContext): Dialect {
  const seed = new SeedAgent({ agent, conn: ctx.conn, manager: ctx.manager, logger: ctx.logger })
  const handlers: Handlers = {
    initialize: () => seedInitialize(info),
    ...seed.handlers(),
  }
  const dispatcher = new Dispatcher(acpSeedMethods, handlers, (_name, spec) => spec.dialects?.includes(agent) ?? false)
  return { name: 'seed', dispatcher, internalError: seedInternalError, end: () => seed.end() }
}
