/**
 * Coverage: every name the product documents give is present in the specs (through the tables
 * generated from them). The names are transcribed below as literal lists, straight from
 * /work/shared/docs/zed.md (otter ACP), 001 (HTTP server), 002 (ferret ACP), 004 (JSON-lines RPC)
 * and /work/shared/specs/openrpc/acp-v1.openrpc.json, §7, §9 (the real ACP v1 wire). A spec that lacks a
 * name fails the matching test with the missing names listed.
 */
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { httpOperations } from '../../generated/http/routes.gen.ts'
import { sseChannels } from '../../generated/sse/events.gen.ts'
import { rpcCommands, rpcOutbound } from '../../generated/rpc/jsonl.gen.ts'
import { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import { acpSeedMethods } from '../../generated/acp/seed.gen.ts'
import { SessionUpdateSchema } from '../../generated/acp/v1-schema.gen.ts'
import { abs } from '../../specs/codegen/lib/files.ts'

// ================================================================ the names, as the documents give them

/** Seed 001: every HTTP route (method + path; `<id>` written as the OpenAPI `{id}`). */
const ROUTES = [
  // "Endpoints" section (plural family)
  'GET /health',
  'GET /info',
  'GET /sessions',
  'GET /sessions/{id}',
  'POST /sessions',
  'POST /sessions/{id}/turns',
  'POST /sessions/{id}/cancel',
  'GET /sessions/{id}/events',
  'GET /sessions/{id}/transcript',
  'POST /sessions/{id}/share',
  'GET /providers',
  'GET /tools',
  // "File-level undo": "drive `/undo` over HTTP (forthcoming endpoint)", beside `POST /sessions/<id>/turns`
  'POST /sessions/{id}/undo',
  'POST /sessions/{id}/redo',
  // "Custom slash commands over HTTP"
  'GET /commands',
  'POST /commands/{name}/invoke',
  // "Cost rollups across persisted runs"
  'GET /runs',
  'GET /runs/cost',
  // "Multi-session support", "SSE resume contract", "Authentication (per-session tokens)"
  'POST /session',
  'GET /session',
  'GET /session/{id}',
  'DELETE /session/{id}',
  'POST /session/{id}/message',
  'POST /session/{id}/cancel',
  'GET /session/{id}/events',
  'POST /session/{id}/rotate-token',
  'GET /healthz',
  'POST /tool/approve',
  // Not in seed 001: the contract-first server serves its own OpenAPI document.
  'GET /openapi.json',
] as const

type Direction = 'client-to-agent' | 'agent-to-client' | 'both'
type Kind = 'request' | 'notification'

/** specs/openrpc/acp-v1.openrpc.json: every stable ACP v1 method, its direction (C→A / A→C / both) and kind. */
const ACP_V1_METHODS: ReadonlyArray<readonly [string, Direction, Kind]> = [
  ['initialize', 'client-to-agent', 'request'],
  ['authenticate', 'client-to-agent', 'request'],
  ['logout', 'client-to-agent', 'request'],
  ['session/new', 'client-to-agent', 'request'],
  ['session/load', 'client-to-agent', 'request'],
  ['session/list', 'client-to-agent', 'request'],
  ['session/delete', 'client-to-agent', 'request'],
  ['session/resume', 'client-to-agent', 'request'],
  ['session/close', 'client-to-agent', 'request'],
  ['session/set_mode', 'client-to-agent', 'request'],
  ['session/set_config_option', 'client-to-agent', 'request'],
  ['session/prompt', 'client-to-agent', 'request'],
  ['session/cancel', 'client-to-agent', 'notification'],
  ['session/request_permission', 'agent-to-client', 'request'],
  ['session/update', 'agent-to-client', 'notification'],
  ['fs/read_text_file', 'agent-to-client', 'request'],
  ['fs/write_text_file', 'agent-to-client', 'request'],
  ['terminal/create', 'agent-to-client', 'request'],
  ['terminal/output', 'agent-to-client', 'request'],
  ['terminal/release', 'agent-to-client', 'request'],
  ['terminal/wait_for_exit', 'agent-to-client', 'request'],
  ['terminal/kill', 'agent-to-client', 'request'],
  ['elicitation/create', 'agent-to-client', 'request'],
  ['elicitation/complete', 'agent-to-client', 'notification'],
  ['$/cancel_request', 'both', 'notification'],
]

/** the ACP v1 protocol (docs/zed.md) / §17: seed-dialect method names that must never be on the ACP v1 wire. */
const SEED_ONLY_METHODS = ['session/message', 'session/setMode', 'session/setModel', 'permission/respond'] as const

/** specs/vendor/acp/schema.v1.json SessionUpdate: every stable `session/update` kind, with a minimal valid update of that kind. */
const ACP_V1_UPDATE_KINDS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['user_message_chunk', { content: { type: 'text', text: 'old prompt' } }],
  ['agent_message_chunk', { content: { type: 'text', text: 'hello ' } }],
  ['agent_thought_chunk', { content: { type: 'text', text: 'thinking' } }],
  ['tool_call', { toolCallId: 't1', title: 'Edit file' }],
  ['tool_call_update', { toolCallId: 't1' }],
  ['plan', { entries: [{ content: 'step one', priority: 'high', status: 'pending' }] }],
  ['available_commands_update', { availableCommands: [{ name: 'create_plan', description: 'Plan it' }] }],
  ['current_mode_update', { currentModeId: 'code' }],
  ['config_option_update', { configOptions: [] }],
  ['session_info_update', { title: 'A title' }],
  ['usage_update', { used: 1000, size: 200000 }],
]

type Dialect = 'otter' | 'ferret'
/**
 * Seed-dialect methods: 000 (otter) and 002 (ferret) method tables, 001's `--acp` aliases
 * (`session/turn`, `session/get`), 000's `session/resume`, and `permission/respond`. Ferret is
 * "a strict superset of otter", so every otter method is in both dialects; the four ferret
 * extensions (three methods here) are ferret-only.
 */
const SEED_METHODS: ReadonlyArray<readonly [string, readonly Dialect[], Direction]> = [
  ['initialize', ['otter', 'ferret'], 'client-to-agent'],
  ['session/new', ['otter', 'ferret'], 'client-to-agent'],
  ['session/load', ['otter', 'ferret'], 'client-to-agent'],
  ['session/list', ['otter', 'ferret'], 'client-to-agent'],
  ['session/message', ['otter', 'ferret'], 'client-to-agent'],
  ['session/cancel', ['otter', 'ferret'], 'client-to-agent'],
  ['session/setMode', ['otter', 'ferret'], 'client-to-agent'],
  ['session/setModel', ['otter', 'ferret'], 'client-to-agent'],
  ['permission/respond', ['otter', 'ferret'], 'client-to-agent'],
  ['session/resume', ['otter', 'ferret'], 'client-to-agent'],
  ['session/turn', ['otter', 'ferret'], 'client-to-agent'],
  ['session/get', ['otter', 'ferret'], 'client-to-agent'],
  ['session/setSandbox', ['ferret'], 'client-to-agent'],
  ['session/setApproval', ['ferret'], 'client-to-agent'],
  ['session/bridgeStatus', ['ferret'], 'client-to-agent'],
  ['session/update', ['otter', 'ferret'], 'agent-to-client'],
]

const TS = '2026-04-25T09:12:08Z'
/** An SSE `data:` payload (001: the `--acp` notifications "carry the same payloads as the SSE `data:` field"). */
const envelope = (type: string, metadata: Record<string, unknown>) => ({ id: 'evt-1', type, metadata, ts: TS })

/** 000: the five `sessionUpdate` kinds, each with a minimal `update` object in the otter shape. */
const OTTER_KINDS_000: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['agent_message_chunk', { content: [{ type: 'text', text: '...' }] }],
  ['tool_call', { tool: 'bash', input: { cmd: 'ls' }, callId: 'c1' }],
  ['tool_result', { callId: 'c1', success: true }],
  ['usage_update', { usage: { input_tokens: 10, output_tokens: 5 } }],
  [
    'permission_request',
    { requestId: 'r1', tool: 'bash', input: { cmd: 'rm -rf /tmp/x' }, options: ['allow', 'always', 'deny'] },
  ],
]

/** 001 "ACP transport (`--acp`)": the seven notification names, each carrying an SSE `data:` payload. */
const OTTER_KINDS_001: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['textDelta', { event: envelope('text_delta', { text: 'hi' }) }],
  ['toolCall', { event: envelope('tool_call', { call_id: 'c1', tool: 'bash', args: {} }) }],
  ['toolResult', { event: envelope('tool_result', { call_id: 'c1', tool: 'bash', ok: true }) }],
  ['stepStart', { event: envelope('step_start', { step: 1 }) }],
  ['stepEnd', { event: envelope('step_end', { step: 1, stop_reason: 'end_turn' }) }],
  ['turnEnd', { event: envelope('turn_end', { stop_reason: 'end_turn' }) }],
  ['error', { event: envelope('error', { message: 'boom' }) }],
]

/** 002: the twelve ferret `kind`s, each with the payload of its table row (flattened next to `kind`). */
const FERRET_KINDS_002: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['agent_message_chunk', { text: 'hello' }],
  ['tool_call_start', { id: 'tc1', tool: 'Bash', args: { command: 'ls' } }],
  ['tool_call_progress', { id: 'tc1', stdout: 'a\n' }],
  ['tool_call_end', { id: 'tc1', result: 'ok', duration_ms: 12 }],
  ['permission_request', { id: 'perm-7', tool: 'Bash', args: { command: 'git push origin main' }, risk: 'medium' }],
  ['sandbox_violation', { tool: 'Write', path: '/etc/passwd', mode: 'workspace-write' }],
  ['approval_changed', { old: 'suggest', new: 'auto' }],
  ['cost_update', { input: 100, output: 50, cache: 0, reasoning: 0, total_usd: 0.01 }],
  ['file_edit', { path: '/repo/a.py', diff: '--- a\n+++ b\n' }],
  ['file_open', { path: '/repo/a.py' }],
  ['notice', { level: 'info', text: 'hi' }],
  ['turn_end', { id: 'turn-1', stop_reason: 'end_turn' }],
]

/** 001: SSE event types, by stream address. */
const SSE_EVENTS: Record<string, readonly string[]> = {
  // "`event:` is the canonical event type (…)" plus the closing `end` record
  '/sessions/{id}/events': [
    'text_delta',
    'tool_call',
    'tool_result',
    'step_start',
    'step_end',
    'turn_start',
    'turn_end',
    'agent_result',
    'error',
    'cancelled',
    'end',
  ],
  // "SSE resume contract" (`event: loop_event`) and "Custom slash commands" (`user_message` … `loop_event` / `result`)
  '/session/{id}/events': ['loop_event', 'user_message', 'result'],
}

/** 004: inbound command types and outbound message types. */
const RPC_COMMANDS = ['prompt', 'steer', 'cancel', 'get_state', 'compact', 'set_model'] as const
const RPC_OUTBOUND = ['RpcResponse', 'StateResponse', 'MessageEvent', 'ToolExecutionEvent', 'ErrorEvent'] as const
/** 004 "JSON exchange example", verbatim. */
const RPC_EXCHANGE = {
  command: { type: 'prompt', id: 'r1', message: 'List files in src/' },
  event: { type: 'message', role: 'assistant', content: 'auth.py main.py', done: true },
  response: { command: 'prompt', id: 'r1', success: true, error: '' },
} as const

/** 000 "Error handling" table. */
const SEED_ERROR_CODES = [-32700, -32600, -32601, -32602, -32603, -32000] as const
/** specs/openrpc/acp-v1.openrpc.json errors (`$defs.ErrorCode`). */
const ACP_V1_ERROR_CODES = [-32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002] as const

// ================================================================ the checks

/** Names of `expected` that are not in `present`. */
function missing(expected: Iterable<string | number>, present: Iterable<string | number>): string[] {
  const have = new Set(present)
  return [...expected].filter((n) => !have.has(n)).map(String)
}

/** `METHOD /path` of every operation in an operation table. */
const routeKeys = (ops: Record<string, { method: string; path: string }>): string[] =>
  Object.values(ops).map((o) => `${o.method} ${o.path}`)

/** Methods missing from an ACP table, or present with another direction / kind. */
function methodProblems(
  expected: ReadonlyArray<readonly [string, Direction, Kind]>,
  table: Record<string, { direction: string; kind: string }>,
): string[] {
  const out: string[] = []
  for (const [name, direction, kind] of expected) {
    const m = table[name]
    if (!m) out.push(`${name}: missing`)
    else {
      if (m.direction !== direction) out.push(`${name}: direction ${m.direction}, want ${direction}`)
      if (m.kind !== kind) out.push(`${name}: kind ${m.kind}, want ${kind}`)
    }
  }
  return out
}

/** Seed methods missing, or with other dialects / direction. */
function seedMethodProblems(
  expected: ReadonlyArray<readonly [string, readonly Dialect[], Direction]>,
  table: Record<string, { direction: string; dialects?: readonly string[] }>,
): string[] {
  const out: string[] = []
  for (const [name, dialects, direction] of expected) {
    const m = table[name]
    if (!m) {
      out.push(`${name}: missing`)
      continue
    }
    const got = [...(m.dialects ?? [])].sort()
    if (JSON.stringify(got) !== JSON.stringify([...dialects].sort()))
      out.push(`${name}: dialects ${JSON.stringify(got)}, want ${JSON.stringify(dialects)}`)
    if (m.direction !== direction) out.push(`${name}: direction ${m.direction}, want ${direction}`)
  }
  return out
}

/** A misspelling of `name` that is not `name`: its last two characters swapped (or doubled). */
function misspell(name: string): string {
  const swapped = name.slice(0, -2) + name.slice(-1) + name.slice(-2, -1)
  return swapped === name ? `${name}${name.slice(-1)}` : swapped
}

interface Parser {
  safeParse(v: unknown): { success: boolean }
}

/**
 * For each `[kind, body]`, `build(kind, body)` must be accepted by `schema`, and
 * `build(misspell(kind), body)` rejected. Returns the failures.
 */
function kindProblems(
  schema: Parser,
  kinds: ReadonlyArray<readonly [string, Record<string, unknown>]>,
  build: (kind: string, body: Record<string, unknown>) => unknown,
): string[] {
  const names = new Set(kinds.map(([k]) => k))
  const out: string[] = []
  for (const [kind, body] of kinds) {
    if (!schema.safeParse(build(kind, body)).success) out.push(`${kind}: minimal sample rejected`)
    const typo = misspell(kind)
    if (names.has(typo)) throw new Error(`misspelling of ${kind} is another kind`)
    if (schema.safeParse(build(typo, body)).success) out.push(`${typo} (misspelled ${kind}): accepted`)
  }
  return out
}

/** Event names of the SSE channel served at `address`, or null when no channel has it. */
function sseEventsAt(
  channels: Record<string, { address: string; events: Record<string, unknown> }>,
  address: string,
): string[] | null {
  const ch = Object.values(channels).find((c) => c.address === address)
  return ch ? Object.keys(ch.events) : null
}

function sseProblems(channels: Record<string, { address: string; events: Record<string, unknown> }>): string[] {
  const out: string[] = []
  for (const [address, events] of Object.entries(SSE_EVENTS)) {
    const have = sseEventsAt(channels, address)
    if (!have) out.push(`${address}: no channel`)
    else for (const e of missing(events, have)) out.push(`${address}: ${e} missing`)
  }
  return out
}

const readSpec = (rel: string): any => {
  const text = readFileSync(abs(rel), 'utf8')
  return rel.endsWith('.json') ? JSON.parse(text) : parse(text)
}
const errorCodes = (rel: string): number[] =>
  Object.values((readSpec(rel).components?.errors ?? {}) as Record<string, { code: number }>).map((e) => e.code)

const seedUpdateParams = acpSeedMethods['session/update'].params as Parser

// ================================================================ tests

afterAll(() => {
  const distinctNotificationNames = new Set(
    [...OTTER_KINDS_000, ...OTTER_KINDS_001, ...FERRET_KINDS_002].map(([k]) => k),
  ).size
  console.log(
    [
      'spec coverage counts (names transcribed from the product documents):',
      `  HTTP routes: ${ROUTES.length}`,
      `  ACP v1 methods: ${ACP_V1_METHODS.length} (+ ${ACP_V1_UPDATE_KINDS.length} stable session/update kinds)`,
      `  seed-dialect methods: ${SEED_METHODS.length}`,
      `  notification kinds: ${OTTER_KINDS_000.length + FERRET_KINDS_002.length + OTTER_KINDS_001.length} (000: ${OTTER_KINDS_000.length}, 002: ${FERRET_KINDS_002.length}, 001: ${OTTER_KINDS_001.length}; ${distinctNotificationNames} distinct names)`,
      `  SSE event types: ${Object.values(SSE_EVENTS).flat().length} (${Object.entries(SSE_EVENTS)
        .map(([a, e]) => `${a}: ${e.length}`)
        .join(', ')})`,
      `  RPC commands / outbound types: ${RPC_COMMANDS.length} / ${RPC_OUTBOUND.length}`,
      `  JSON-RPC error codes: seed ${SEED_ERROR_CODES.length}, ACP v1 ${ACP_V1_ERROR_CODES.length}`,
    ].join('\n'),
  )
})

describe('HTTP (seed 001 → specs/openapi)', () => {
  it('every route of seed 001 is an operation (method + path) in httpOperations', () => {
    expect(missing(ROUTES, routeKeys(httpOperations))).toEqual([])
  })
})

describe('ACP v1 (the ACP v1 protocol (docs/zed.md) → specs/openrpc/acp-v1.openrpc.json)', () => {
  it('every stable method of §5 is in acpV1Methods with its direction and kind', () => {
    expect(methodProblems(ACP_V1_METHODS, acpV1Methods)).toEqual([])
  })

  it('no seed-only method name (session/message, session/setMode, session/setModel, permission/respond) is on the v1 wire', () => {
    expect(SEED_ONLY_METHODS.filter((m) => m in acpV1Methods)).toEqual([])
  })

  it('every stable session/update kind of §7 is a branch of the vendored SessionUpdate union', () => {
    const vendor = readSpec('specs/vendor/acp/schema.v1.json')
    const consts = (vendor.$defs.SessionUpdate.oneOf as any[]).map((b) => b.properties?.sessionUpdate?.const)
    expect(
      missing(
        ACP_V1_UPDATE_KINDS.map(([k]) => k),
        consts,
      ),
    ).toEqual([])
  })

  it('the generated SessionUpdateSchema accepts a minimal sample of every stable kind and rejects its misspelling', () => {
    expect(
      kindProblems(SessionUpdateSchema, ACP_V1_UPDATE_KINDS, (kind, body) => ({ sessionUpdate: kind, ...body })),
    ).toEqual([])
  })

  it("every ACP v1 error code of §9 is in the v1 spec's components.errors", () => {
    expect(missing(ACP_V1_ERROR_CODES, errorCodes('specs/openrpc/acp-v1.openrpc.json'))).toEqual([])
  })
})

describe('ACP seed dialect (seeds 000, 001, 002 → specs/openrpc/acp-seed.openrpc.yaml)', () => {
  it('every seed method is in acpSeedMethods with its dialects (ferret extensions ferret-only) and direction', () => {
    expect(seedMethodProblems(SEED_METHODS, acpSeedMethods)).toEqual([])
  })

  it('session/update is a notification; initialize, session/resume and permission/respond are requests', () => {
    const kinds = Object.fromEntries(
      ['session/update', 'initialize', 'session/resume', 'permission/respond'].map((m) => [
        m,
        (acpSeedMethods as Record<string, { kind: string }>)[m]?.kind,
      ]),
    )
    expect(kinds).toEqual({
      'session/update': 'notification',
      initialize: 'request',
      'session/resume': 'request',
      'permission/respond': 'request',
    })
  })

  it('000: the five sessionUpdate kinds are accepted by the session/update params validator; misspellings rejected', () => {
    const build = (kind: string, body: Record<string, unknown>) => ({
      sessionId: 'otter-abc',
      eventId: 1,
      update: { sessionUpdate: kind, ...body },
    })
    expect(kindProblems(seedUpdateParams, OTTER_KINDS_000, build)).toEqual([])
  })

  it('001: the seven --acp notification names are accepted by the session/update params validator; misspellings rejected', () => {
    const build = (kind: string, body: Record<string, unknown>) => ({
      sessionId: 'otter-abc',
      eventId: 2,
      update: { sessionUpdate: kind, ...body },
    })
    expect(kindProblems(seedUpdateParams, OTTER_KINDS_001, build)).toEqual([])
  })

  it('002: the twelve ferret kinds are accepted by the session/update params validator; misspellings rejected', () => {
    const build = (kind: string, body: Record<string, unknown>) => ({
      sessionId: 'ferret-abc',
      eventId: 3,
      kind,
      ...body,
    })
    expect(kindProblems(seedUpdateParams, FERRET_KINDS_002, build)).toEqual([])
  })

  it("every JSON-RPC error code of seed 000 is in the seed spec's components.errors", () => {
    expect(missing(SEED_ERROR_CODES, errorCodes('specs/openrpc/acp-seed.openrpc.yaml'))).toEqual([])
  })
})

describe('SSE (seed 001 → specs/asyncapi/sse.asyncapi.yaml)', () => {
  it('every SSE event type of seed 001 is in sseChannels on the stream that carries it', () => {
    expect(sseProblems(sseChannels)).toEqual([])
  })
})

describe('JSON-lines RPC (seed 004 → specs/asyncapi/rpc.asyncapi.yaml)', () => {
  it('every inbound command type is in rpcCommands', () => {
    expect(missing(RPC_COMMANDS, Object.keys(rpcCommands))).toEqual([])
  })

  it('every outbound type is in rpcOutbound', () => {
    expect(missing(RPC_OUTBOUND, Object.keys(rpcOutbound))).toEqual([])
  })

  it('the exchange example validates: the command as `prompt`, the event only as MessageEvent, the reply only as RpcResponse', () => {
    expect(rpcCommands.prompt.schema.safeParse(RPC_EXCHANGE.command).success).toBe(true)
    const accepting = (line: unknown) =>
      Object.entries(rpcOutbound)
        .filter(([, o]) => o.schema.safeParse(line).success)
        .map(([n]) => n)
    expect(accepting(RPC_EXCHANGE.event)).toEqual(['MessageEvent'])
    expect(accepting(RPC_EXCHANGE.response)).toEqual(['RpcResponse'])
    // and the validators are not permissive: broken variants of the same lines are rejected
    expect(rpcCommands.prompt.schema.safeParse({ ...RPC_EXCHANGE.command, message: 42 }).success).toBe(false)
    expect(rpcOutbound.MessageEvent.schema.safeParse({ ...RPC_EXCHANGE.event, done: 'yes' }).success).toBe(false)
    const { success: _s, ...noSuccess } = RPC_EXCHANGE.response
    expect(rpcOutbound.RpcResponse.schema.safeParse(noSuccess).success).toBe(false)
  })
})

describe('the coverage checks can fail', () => {
  it('a route table with one operation deleted reports exactly that route missing', () => {
    const copy: Record<string, { method: string; path: string }> = { ...httpOperations }
    const [id, op] = Object.entries(copy).find(([, o]) => o.method === 'POST' && o.path === '/tool/approve')!
    delete copy[id]
    expect(missing(ROUTES, routeKeys(copy))).toEqual([`${op.method} ${op.path}`])
  })

  it('an ACP v1 table with a method deleted or its direction flipped is reported', () => {
    const copy: Record<string, { direction: string; kind: string }> = { ...acpV1Methods }
    delete copy['session/prompt']
    copy['fs/read_text_file'] = { ...copy['fs/read_text_file']!, direction: 'client-to-agent' }
    expect(methodProblems(ACP_V1_METHODS, copy)).toEqual([
      'session/prompt: missing',
      'fs/read_text_file: direction client-to-agent, want agent-to-client',
    ])
  })

  it('a seed table with a ferret extension leaked into otter, or a method deleted, is reported', () => {
    const copy: Record<string, { direction: string; dialects?: readonly string[] }> = { ...acpSeedMethods }
    copy['session/setSandbox'] = { ...copy['session/setSandbox']!, dialects: ['otter', 'ferret'] }
    delete copy['session/get']
    expect(seedMethodProblems(SEED_METHODS, copy)).toEqual([
      'session/get: missing',
      'session/setSandbox: dialects ["ferret","otter"], want ["ferret"]',
    ])
  })

  it('an SSE table with an event moved to the other stream is reported', () => {
    const events: Record<string, unknown> = { ...sseChannels.sessionsEvents.events }
    delete events.cancelled
    const copy = {
      ...sseChannels,
      sessionsEvents: { ...sseChannels.sessionsEvents, events },
      sessionEvents: { ...sseChannels.sessionEvents, events: { ...sseChannels.sessionEvents.events, cancelled: null } },
    }
    expect(sseProblems(copy)).toEqual(['/sessions/{id}/events: cancelled missing'])
  })

  it('kindProblems reports a kind that the validator does not know', () => {
    const withUnknown = [...FERRET_KINDS_002, ['tool_result', { id: 'x' }] as const]
    const build = (kind: string, body: Record<string, unknown>) => ({
      sessionId: 'ferret-abc',
      eventId: 3,
      kind,
      ...body,
    })
    expect(kindProblems(seedUpdateParams, withUnknown, build)).toEqual(['tool_result: minimal sample rejected'])
  })
})
