/** The real ACP v1 wire: the official method table, honest capabilities, masked internal errors. */
import { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import { Dispatcher } from '../jsonrpc/dispatcher.ts'
import { acpError, v1InternalError } from './errors.ts'
import type { Dialect, DialectContext } from './dialect.ts'
import { v1Initialize, type AgentInfo } from './initialize.ts'
import { V1Agent, type V1ClientCaps } from './v1/agent.ts'

export { v1Initialize, type AgentInfo } from './initialize.ts'

export function createV1Dialect(info: AgentInfo, ctx: DialectContext): Dialect {
  const agent = new V1Agent({
    agent: info.agent,
    conn: ctx.conn,
    manager: ctx.manager,
    logger: ctx.logger,
    version: info.version,
    detach: ctx.detach,
  })
  const handlers = {
    initialize: (p: { clientCapabilities?: V1ClientCaps }) => {
      agent.setClient(p.clientCapabilities)
      return v1Initialize(info, agent.extensions())
    },
    ...agent.handlers(),
  }
  return {
    name: 'acp-v1',
    dispatcher: new Dispatcher(acpV1Methods, handlers),
    domainError: (err) => acpError(err, 'acp-v1'),
    internalError: v1InternalError,
    end: () => agent.end(),
  }
}
