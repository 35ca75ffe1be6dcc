/** The real ACP v1 wire: the official method table, honest capabilities, masked internal errors. */
import { acpV1Methods, ACP_V1_PROTOCOL_VERSION } from '../../generated/acp/v1-methods.gen.ts'
import type { z } from 'zod'
import type { InitializeResponseSchema } from '../../generated/acp/v1-schema.gen.ts'
import { Dispatcher } from '../jsonrpc/dispatcher.ts'
import { maskInternal } from '../jsonrpc/errors.ts'
import type { AgentName, Dialect, DialectContext } from './dialect.ts'
import { V1Agent, type V1ClientCaps } from './v1/agent.ts'

export interface AgentInfo {
  agent: AgentName
  version: string
}

/**
 * `initialize` on the v1 wire: echo version 1 and advertise only what this build serves.
 * Credentials come from the environment, so the one auth method needs no client action.
 */
export function v1Initialize(info: AgentInfo, extensions: readonly string[] = []): z.input<typeof InitializeResponseSchema> {
  return {
    protocolVersion: ACP_V1_PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      // stdio and Streamable HTTP MCP servers are connected (server/mcp); the deprecated SSE transport is not.
      mcpCapabilities: { http: true, sse: false },
      sessionCapabilities: { list: {}, resume: {}, close: {} },
      // Custom capabilities ride in `_meta` of the capability object (docs/decisions/0120).
      _meta: {
        'chimera/extensions': [...extensions],
        ...(info.agent === 'ferret' ? { 'ferret/updates': true } : {}),
      },
    },
    agentInfo: { name: `chimera-${info.agent}`, title: `Chimera ${info.agent}`, version: info.version },
    authMethods: [
      { id: 'environment', name: 'Provider keys from the environment', description: 'Set ANTHROPIC_API_KEY or OPENAI_API_KEY where the agent starts; without one the offline model answers' },
    ],
    _meta: { steering: { supported: true } },
  }
}

export function createV1Dialect(info: AgentInfo, ctx: DialectContext): Dialect {
  const agent = new V1Agent({ agent: info.agent, conn: ctx.conn, manager: ctx.manager, logger: ctx.logger, version: info.version })
  const handlers = {
    initialize: (p: { clientCapabilities?: V1ClientCaps }) => {
      agent.setClient(p.clientCapabilities)
      return v1Initialize(info, agent.extensions())
    },
    ...agent.handlers(),
  }
  return { name: 'acp-v1', dispatcher: new Dispatcher(acpV1Methods, handlers), internalError: maskInternal, end: () => agent.end() }
}
