/**
 * specs/openrpc/acp-seed.openrpc.yaml → generated/acp/seed.gen.ts (validators + method table), and
 * its error codes → generated/acp/seed-constants.gen.ts, a module without validators: the ACP error
 * mapping needs the codes on every wire, the validators only when the seed dialect is spoken.
 */
import { header, readSpec } from './lib/files.ts'
import { stableJson, tsModule, type GeneratedFile } from './lib/module.ts'
import { methodTable } from './lib/rpc-table.ts'

export const ACP_SEED_OPENRPC = 'specs/openrpc/acp-seed.openrpc.yaml'

export function generateAcpSeed(): GeneratedFile[] {
  const doc = readSpec(ACP_SEED_OPENRPC)
  const out = 'generated/acp/seed.gen.ts'
  const { zod, table } = methodTable(doc, ACP_SEED_OPENRPC, out, 'acpSeed')
  const errors = Object.fromEntries(
    Object.entries((doc.components?.errors ?? {}) as Record<string, any>).map(([k, e]) => [k, e.code]),
  )
  const constantsPath = 'generated/acp/seed-constants.gen.ts'
  const constants = `${header([ACP_SEED_OPENRPC])}/** JSON-RPC error codes of the seed dialect. */\nexport const ACP_SEED_ERRORS = ${stableJson(errors)} as const\n`
  const extra = `${table}\nexport { ACP_SEED_ERRORS } from './seed-constants.gen.ts'\n`
  return [tsModule(out, [ACP_SEED_OPENRPC], zod, extra), { path: constantsPath, text: constants }]
}
