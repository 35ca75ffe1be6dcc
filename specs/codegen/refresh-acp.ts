/**
 * `make specs-refresh`: vendor the ACP v1 JSON Schema from the installed
 * `@agentclientprotocol/sdk` into specs/vendor/acp (with provenance in vendor.json), then
 * re-assemble specs/openrpc/acp-v1.openrpc.json. Reads node_modules; never the network.
 */
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { abs } from './lib/files.ts'
import { ACP_VENDOR } from './lib/refs.ts'
import { ACP_V1_OPENRPC, renderAcpV1 } from './acp-v1-openrpc.ts'

const require = createRequire(import.meta.url)
const schemaPath = require.resolve('@agentclientprotocol/sdk/schema/v1/schema.json', { paths: [abs('.')] })
// package.json is not exported; it sits three levels above schema/v1/schema.json.
const pkg = JSON.parse(readFileSync(join(dirname(schemaPath), '../../package.json'), 'utf8'))
const bytes = readFileSync(schemaPath)
writeFileSync(abs(ACP_VENDOR), bytes)
const vendor = {
  'acp/schema.v1.json': {
    package: pkg.name,
    version: pkg.version,
    path: 'schema/v1/schema.json',
    sha256: createHash('sha256').update(bytes).digest('hex'),
  },
}
writeFileSync(abs('specs/vendor/vendor.json'), `${JSON.stringify(vendor, null, 2)}\n`)
writeFileSync(abs(ACP_V1_OPENRPC), renderAcpV1())
process.stderr.write(`vendored ${pkg.name}@${pkg.version} schema/v1/schema.json; wrote ${ACP_V1_OPENRPC}\n`)
