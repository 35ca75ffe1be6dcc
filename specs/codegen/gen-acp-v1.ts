/**
 * ACP v1: the vendored official schema → generated/acp/v1-schema.gen.ts (every `$defs` entry),
 * and specs/openrpc/acp-v1.openrpc.json → generated/acp/v1-methods.gen.ts (extension schemas
 * and the method table: name, direction, kind, params and result validators, errors), and its
 * constants (error codes, protocol version) → generated/acp/v1-constants.gen.ts, a module without
 * zod so the ACP start-up path (framing, `initialize`) loads no validator (docs/decisions/0140).
 */
import { header, readSpec } from './lib/files.ts'
import { stableJson, tsModule, type GeneratedFile } from './lib/module.ts'
import { ACP_MODULE, ACP_VENDOR, makeResolver } from './lib/refs.ts'
import { schemasToZod } from './lib/zod.ts'
import { methodTable } from './lib/rpc-table.ts'
import { ACP_V1_OPENRPC } from './acp-v1-openrpc.ts'

export function generateAcpV1(): GeneratedFile[] {
  const vendor = readSpec(ACP_VENDOR)
  const schemaModule = tsModule(
    ACP_MODULE,
    [ACP_VENDOR],
    schemasToZod(vendor.$defs, makeResolver(ACP_VENDOR, ACP_MODULE, '#/$defs/')),
  )
  const doc = readSpec(ACP_V1_OPENRPC)
  const out = 'generated/acp/v1-methods.gen.ts'
  const { zod, table } = methodTable(doc, ACP_V1_OPENRPC, out, 'acpV1')
  const errors = Object.fromEntries(
    Object.entries(doc.components.errors as Record<string, any>).map(([k, e]) => [k, e.code]),
  )
  const constantsPath = 'generated/acp/v1-constants.gen.ts'
  const constants = `${header([ACP_V1_OPENRPC])}/** JSON-RPC error codes of the ACP v1 wire (from the official schema's ErrorCode). */\nexport const ACP_V1_ERRORS = ${stableJson(errors)} as const\n\n/** The protocol version that selects this wire in \`initialize\`. */\nexport const ACP_V1_PROTOCOL_VERSION = 1 as const\n`
  const extra = `${table}\nexport { ACP_V1_ERRORS, ACP_V1_PROTOCOL_VERSION } from './v1-constants.gen.ts'\n`
  return [
    schemaModule,
    tsModule(out, [ACP_V1_OPENRPC, ACP_VENDOR], zod, extra),
    { path: constantsPath, text: constants },
  ]
}
