/**
 * AsyncAPI 3 documents → zod validators and message tables.
 * - specs/asyncapi/bridge.asyncapi.yaml → generated/bridge/relay.gen.ts: the relay's addresses,
 *   the control link's messages and the close codes of the cloud bridge.
 * - specs/asyncapi/instances.asyncapi.yaml → generated/instances/forward.gen.ts: what instances
 *   forward to each other through Redis (requests, replies, session operations, HTTP requests).
 * - specs/asyncapi/sse.asyncapi.yaml → generated/sse/events.gen.ts: per channel, SSE event name
 *   (`event:`) → payload (`data:`) and frame-header (`id:`/`retry:`) validators.
 * - specs/asyncapi/rpc.asyncapi.yaml → generated/rpc/jsonl.gen.ts: command `type` → validator
 *   (stdin), outbound message name → validator and its `type` discriminator (stdout).
 */
import { readSpec } from './lib/files.ts'
import { derefLocal, pascal, tsModule, type GeneratedFile } from './lib/module.ts'
import { makeResolver } from './lib/refs.ts'
import { schemaIdent, schemasToZod } from './lib/zod.ts'

export const SSE_SPEC = 'specs/asyncapi/sse.asyncapi.yaml'
export const RPC_SPEC = 'specs/asyncapi/rpc.asyncapi.yaml'
export const BRIDGE_SPEC = 'specs/asyncapi/bridge.asyncapi.yaml'
export const INSTANCES_SPEC = 'specs/asyncapi/instances.asyncapi.yaml'

interface Msg {
  name: string
  payload: string
  headers?: string
  typeConst?: string
  extension: boolean
}

/** Resolve a channel's messages into named payload/header schemas added to `schemas`. */
function channelMessages(doc: any, channelKey: string, schemas: Record<string, unknown>): Msg[] {
  const channel = doc.channels[channelKey]
  const out: Msg[] = []
  for (const [key, ref] of Object.entries(channel.messages as Record<string, any>)) {
    const msg = derefLocal(doc, ref)
    const traits = ((msg.traits ?? []) as any[]).map((t) => derefLocal(doc, t))
    const headers = msg.headers ?? traits.find((t) => t.headers)?.headers
    const base = `${pascal(channelKey)}${pascal(key)}`
    schemas[`${base}Payload`] = msg.payload
    if (headers) schemas[`${base}Headers`] = headers
    const payload = derefLocal(doc, msg.payload)
    out.push({
      name: msg.name ?? key,
      payload: schemaIdent(`${base}Payload`),
      headers: headers ? schemaIdent(`${base}Headers`) : undefined,
      typeConst: payload?.properties?.type?.const,
      extension: Boolean(msg['x-extension']),
    })
  }
  return out
}

export function generateSse(): GeneratedFile {
  const doc = readSpec(SSE_SPEC)
  const out = 'generated/sse/events.gen.ts'
  const schemas: Record<string, unknown> = { ...doc.components.schemas }
  const rows: string[] = []
  for (const key of Object.keys(doc.channels)) {
    const msgs = channelMessages(doc, key, schemas)
    rows.push(`  ${key}: {`, `    address: ${JSON.stringify(doc.channels[key].address)},`, '    events: {')
    for (const m of msgs)
      rows.push(`      ${JSON.stringify(m.name)}: { payload: ${m.payload}, headers: ${m.headers ?? 'null'} },`)
    rows.push('    },', '  },')
  }
  const zod = schemasToZod(schemas, makeResolver(SSE_SPEC, out, '#/components/schemas/'))
  const table = [
    `/** SSE channels of ${SSE_SPEC}: address and, per \`event:\` name, the \`data:\` and frame validators. */`,
    'export const sseChannels = {',
    ...rows,
    '} as const',
    'export type SseChannel = keyof typeof sseChannels',
    'export type SseEventName<C extends SseChannel> = keyof (typeof sseChannels)[C]["events"]',
    '',
  ].join('\n')
  return tsModule(out, [SSE_SPEC], zod, table)
}

export function generateRpc(): GeneratedFile {
  const doc = readSpec(RPC_SPEC)
  const out = 'generated/rpc/jsonl.gen.ts'
  const schemas: Record<string, unknown> = { ...doc.components.schemas }
  const inbound = channelMessages(doc, 'stdin', schemas)
  const outbound = channelMessages(doc, 'stdout', schemas)
  const zod = schemasToZod(schemas, makeResolver(RPC_SPEC, out, '#/components/schemas/'))
  const lines = [
    `/** Commands read from stdin (${RPC_SPEC}): \`type\` → validator. */`,
    'export const rpcCommands = {',
    ...inbound.map((m) => `  ${JSON.stringify(m.name)}: { schema: ${m.payload}, extension: ${m.extension} },`),
    '} as const',
    'export type RpcCommandType = keyof typeof rpcCommands',
    '',
    '/** Messages written to stdout: name → validator and the `type` value it carries. */',
    'export const rpcOutbound = {',
    ...outbound.map(
      (m) =>
        `  ${JSON.stringify(m.name)}: { schema: ${m.payload}, type: ${JSON.stringify(m.typeConst ?? null)}, extension: ${m.extension} },`,
    ),
    '} as const',
    'export type RpcOutboundName = keyof typeof rpcOutbound',
    '/** Any message the server may write to stdout (what handlers and the event mapping produce). */',
    "export type RpcOutboundMessage = z.input<(typeof rpcOutbound)[RpcOutboundName]['schema']>",
    '',
    `/** The maximum length of one input line, in bytes (\`info.x-max-line-bytes\`). */`,
    `export const RPC_MAX_LINE_BYTES = ${Number(doc.info['x-max-line-bytes'])}`,
    '',
  ]
  return tsModule(out, [RPC_SPEC], zod, lines.join('\n'))
}

/** `export const <name> = { <channel>: <address>, ... } as const`: a document's channel addresses. */
function addressTable(doc: any, name: string, comment: string): string[] {
  return [
    `/** ${comment} */`,
    `export const ${name} = {`,
    ...Object.keys(doc.channels).map((k) => `  ${k}: ${JSON.stringify(doc.channels[k].address)},`),
    '} as const',
    '',
  ]
}

export function generateBridge(): GeneratedFile {
  const doc = readSpec(BRIDGE_SPEC)
  const out = 'generated/bridge/relay.gen.ts'
  const schemas: Record<string, unknown> = { ...doc.components.schemas }
  const control = channelMessages(doc, 'control', schemas)
  const zod = schemasToZod(schemas, makeResolver(BRIDGE_SPEC, out, '#/components/schemas/'))
  const lines = [
    ...addressTable(
      doc,
      'relayAddresses',
      `The relay's WebSocket addresses (${BRIDGE_SPEC}); a channel's is \`<control address>/channels/<id>\`.`,
    ),
    '/** Messages the relay sends the editor on the control link: name → validator and its `type`. */',
    'export const relayControl = {',
    ...control.map(
      (m) => `  ${JSON.stringify(m.name)}: { schema: ${m.payload}, type: ${JSON.stringify(m.typeConst ?? null)} },`,
    ),
    '} as const',
    '',
    "/** The relay's close codes (`info.x-close-codes`). */",
    `export const RELAY_CLOSE_CODES = ${JSON.stringify(doc.info['x-close-codes'])} as const`,
    '',
  ]
  return tsModule(out, [BRIDGE_SPEC], zod, lines.join('\n'))
}

export function generateInstances(): GeneratedFile {
  const doc = readSpec(INSTANCES_SPEC)
  const out = 'generated/instances/forward.gen.ts'
  const schemas: Record<string, unknown> = { ...doc.components.schemas }
  const zod = schemasToZod(schemas, makeResolver(INSTANCES_SPEC, out, '#/components/schemas/'))
  const lines = [
    ...addressTable(
      doc,
      'instanceLists',
      `The Redis lists of ${INSTANCES_SPEC}, by channel (\`{instance}\`: the instance id).`,
    ),
    '/** The version of the link this instance speaks (`info.x-link-version`): every request and reply carries it as `v`. */',
    `export const INSTANCE_LINK_VERSION = ${Number(doc.info['x-link-version'])}`,
    '',
  ]
  return tsModule(out, [INSTANCES_SPEC], zod, lines.join('\n'))
}
