/**
 * The seed wire of docs/zed.md (otter) and docs/zed.md (ferret): the seed method table filtered by
 * the launched agent's dialect, and the documents' error shape for agent failures (-32000 with
 * `{name, message}`; the stack stays in the log, see docs/decisions/0003-acp-dialects.md).
 */
import { acpSeedMethods } from '../../generated/acp/seed.gen.ts'
import { acpError, seedInternalError } from './errors.ts'
import { Dispatcher } from '../jsonrpc/dispatcher.ts'
import { SeedAgent } from './seed/agent.ts'
import type { AgentName, Dialect, DialectContext } from './dialect.ts'
import { seedInitialize, type AgentInfo } from './initialize.ts'

export { seedInitialize } from './initialize.ts'

export function createSeedDialect(agent: AgentName, info: AgentInfo, ctx: DialectContext): Dialect {
  const seed = new SeedAgent({ agent, conn: ctx.conn, manager: ctx.manager, logger: ctx.logger, detach: ctx.detach })
  const handlers = {
    initialize: () => seedInitialize(info),
    ...seed.handlers(),
  }
  const dispatcher = new Dispatcher(acpSeedMethods, handlers, (_name, spec) => spec.dialects?.includes(agent) ?? false)
  return {
    name: 'seed',
    dispatcher,
    domainError: (err) => acpError(err, 'seed'),
    internalError: seedInternalError,
    end: () => seed.end(),
  }
}
