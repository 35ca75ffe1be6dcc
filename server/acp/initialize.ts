/**
 * The `initialize` answers of both ACP dialects, and a strict check of the common `initialize`
 * params that needs no validator library. serve-acp.ts answers a plain `initialize` from here
 * before the dialects, the session manager and zod are loaded (docs/decisions/0140): anything
 * the check does not recognise goes the slow way, through the dialect's generated validator, so
 * every frame stays what the validator would have produced.
 */
import type { z } from 'zod'
import type { InitializeResponseSchema } from '../../generated/acp/v1-schema.gen.ts'
import type { InitializeMethodResultSchema } from '../../generated/acp/seed.gen.ts'
import { ACP_V1_PROTOCOL_VERSION } from '../../generated/acp/v1-constants.gen.ts'
import type { AgentName, DialectName } from './dialect.ts'

export interface AgentInfo {
  agent: AgentName
  version: string
}

/** docs/zed.md "Resume after disconnect": builds that ship `session/resume` report version 2. */
const OTTER_ACP_PROTOCOL_VERSION = 2
/** docs/zed.md handshake example. */
const FERRET_ACP_PROTOCOL_VERSION = '0.2'

/**
 * The `_`-prefixed methods the v1 agent serves besides `_session/steering` (v1/agent.ts
 * `extensions()`; initialize.test.ts keeps the two equal).
 */
/** The one authentication method offered in `initialize`: provider keys from the environment. */
export const AUTH_METHOD_ID = 'environment'

export function v1Extensions(agent: AgentName): string[] {
  const common = ['_chimera/session/replay', '_chimera/session/state', '_chimera/session/compact']
  return agent === 'ferret'
    ? [...common, '_ferret/session/setSandbox', '_ferret/session/setApproval', '_ferret/session/bridgeStatus']
    : common
}

/**
 * `initialize` on the v1 wire: echo version 1 and advertise only what this build serves.
 * Credentials come from the environment, so the one auth method needs no client action.
 */
export function v1Initialize(
  info: AgentInfo,
  extensions: readonly string[] = [],
): z.input<typeof InitializeResponseSchema> {
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
      {
        id: AUTH_METHOD_ID,
        name: 'Provider keys from the environment',
        description:
          'Set ANTHROPIC_API_KEY or OPENAI_API_KEY where the agent starts; without one the offline model answers',
      },
    ],
    _meta: { steering: { supported: true } },
  }
}

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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const only = (o: Record<string, unknown>, keys: readonly string[]): boolean =>
  Object.keys(o).every((k) => keys.includes(k))
const optional = (v: unknown, ok: (v: unknown) => boolean): boolean => v === undefined || ok(v)
const metaOk = (v: unknown): boolean => optional(v, (m) => m === null || isObject(m))

/**
 * True when the generated validator of `dialect` certainly accepts these `initialize` params
 * (a strict subset of what it accepts: the fields real clients send, with their documented
 * types). False sends the request the slow way, never changes an answer.
 */
export function plainInitialize(dialect: DialectName, params: unknown): boolean {
  if (dialect === 'seed') {
    const p = params ?? {}
    return isObject(p) && optional(p.clientCapabilities, isObject) && optional(p.clientInfo, isObject)
  }
  if (!isObject(params) || !only(params, ['protocolVersion', 'clientCapabilities', 'clientInfo', '_meta'])) return false
  const v = params.protocolVersion
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 65535) return false
  const caps = params.clientCapabilities
  const capsOk = optional(caps, (c) => {
    if (!isObject(c) || !only(c, ['fs', 'terminal', '_meta'])) return false
    const fsOk = optional(
      c.fs,
      (f) =>
        isObject(f) &&
        only(f, ['readTextFile', 'writeTextFile', '_meta']) &&
        optional(f.readTextFile, (b) => typeof b === 'boolean') &&
        optional(f.writeTextFile, (b) => typeof b === 'boolean') &&
        metaOk(f._meta),
    )
    return fsOk && optional(c.terminal, (b) => typeof b === 'boolean') && metaOk(c._meta)
  })
  const infoOk = optional(
    params.clientInfo,
    (i) =>
      i === null ||
      (isObject(i) &&
        only(i, ['name', 'title', 'version', '_meta']) &&
        typeof i.name === 'string' &&
        typeof i.version === 'string' &&
        optional(i.title, (t) => t === null || typeof t === 'string') &&
        metaOk(i._meta)),
  )
  return capsOk && infoOk && metaOk(params._meta)
}
