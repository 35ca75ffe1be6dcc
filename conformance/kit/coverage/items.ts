/**
 * The spec items a coverage report counts, derived from the generated tables (so the list
 * cannot drift from the specs): ACP v1 and seed methods, update kinds and error codes, HTTP
 * operations and error codes, SSE events per channel, JSON-lines commands and messages, and
 * the canonical event types. An item is `<family> <name>`, e.g. `acp.v1 method session/prompt`.
 */
import type { ZodType } from 'zod'
import { ACP_V1_ERRORS, acpV1Methods } from '../../../generated/acp/v1-methods.gen.ts'
import { SessionUpdateSchema } from '../../../generated/acp/v1-schema.gen.ts'
import {
  ACP_SEED_ERRORS,
  FerretUpdateKindSchema,
  OtterUpdateSchema,
  acpSeedMethods,
} from '../../../generated/acp/seed.gen.ts'
import { httpOperations } from '../../../generated/http/routes.gen.ts'
import { sseChannels } from '../../../generated/sse/events.gen.ts'
import { rpcCommands, rpcOutbound } from '../../../generated/rpc/jsonl.gen.ts'
import { ErrorCodeSchema, EventTypeSchema } from '../../../generated/schemas.gen.ts'

export const FAMILIES = [
  'acp.v1 method',
  'acp.v1 update',
  'acp.v1 error',
  'acp.seed method',
  'acp.seed update',
  'acp.seed error',
  'http route',
  'http error',
  'sse event',
  'rpc command',
  'rpc message',
  'event type',
] as const
export type Family = (typeof FAMILIES)[number]

/** Literal values of `key` in the object variants of a (union / intersection of) zod object schema. */
export function literalsAt(schema: ZodType, key: string, out = new Set<string>()): Set<string> {
  const d = (schema as unknown as { def?: any }).def
  if (!d) return out
  if (d.type === 'union') for (const o of d.options) literalsAt(o, key, out)
  else if (d.type === 'intersection') {
    literalsAt(d.left, key, out)
    literalsAt(d.right, key, out)
  } else if (d.type === 'object') {
    const kd = d.shape[key]?.def
    if (kd?.type === 'literal') for (const v of kd.values) out.add(String(v))
  } else if (d.type === 'pipe') literalsAt(d.in, key, out)
  else if (d.type === 'lazy') literalsAt(d.getter(), key, out)
  return out
}

export function specItems(): Map<Family, string[]> {
  const m = new Map<Family, string[]>()
  m.set('acp.v1 method', Object.keys(acpV1Methods))
  m.set('acp.v1 update', [...literalsAt(SessionUpdateSchema, 'sessionUpdate')])
  m.set('acp.v1 error', Object.values(ACP_V1_ERRORS).map(String))
  m.set('acp.seed method', Object.keys(acpSeedMethods))
  m.set('acp.seed update', [
    ...new Set([...literalsAt(OtterUpdateSchema, 'sessionUpdate'), ...FerretUpdateKindSchema.options]),
  ])
  m.set('acp.seed error', [...new Set(Object.values(ACP_SEED_ERRORS).map(String))])
  m.set('http route', Object.keys(httpOperations))
  m.set('http error', [...ErrorCodeSchema.options])
  m.set(
    'sse event',
    Object.entries(sseChannels).flatMap(([c, ch]) => Object.keys(ch.events).map((e) => `${c}.${e}`)),
  )
  m.set('rpc command', Object.keys(rpcCommands))
  m.set('rpc message', Object.keys(rpcOutbound))
  m.set('event type', [...EventTypeSchema.options])
  return m
}

/** `type` value on the JSON-lines wire → the outbound message name. */
export const RPC_TYPE_TO_MESSAGE: Record<string, string> = Object.fromEntries(
  Object.entries(rpcOutbound).map(([name, o]) => [o.type, name]),
)
