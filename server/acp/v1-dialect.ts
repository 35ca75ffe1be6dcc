/** The real ACP v1 wire: the official method table, masked internal errors. */
import { acpV1Methods, ACP_V1_PROTOCOL_VERSION } from '../../generated/acp/v1-methods.gen.ts'
import type { z } from 'zod'
import type { InitializeResponseSchema } from '../../generated/acp/v1-schema.gen.ts'
import { Dispatcher, type Handlers } from '../jsonrpc/dispatcher.ts'
import { maskInternal } from '../jsonrpc/errors.ts'
import type { AgentName, Dialect } from './dialect.ts'

export interface AgentInfo {
  agent: AgentName
  version: string
}

/** `initialize` on the v1 wire: echo version 1 and advertise only what this build serves. */
export function v1Initialize(info: AgentInfo): z.input<typeof InitializeResponseSchema> {
  return {
    protocolVersion: ACP_V1_PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: false,
      promptCapabilities: { image: false, audio: false, embeddedContext: false },
      mcpCapabilities: { http: false, sse: false },
      sessionCapabilities: {},
    },
    agentInfo: { name: `chimera-${info.agent}`, title: `Chimera ${info.agent}`, version: info.version },
    authMethods: [],
  }
}

export function createV1Dialect(info: AgentInfo): Dialect {
  const handlers: Handlers = {
    initialize: () => v1Initialize(info),
  }
  return { name: 'acp-v1', dispatcher: new Dispatcher(acpV1Methods, handlers), internalError: maskInternal }
}
