#!/usr/bin/env node
// The conformance kit on its own (built by `npm run build` / `make build` into dist/).
import { existsSync } from 'node:fs'

const entry = new URL('../dist/chimera-conformance.mjs', import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write(
    'chimera-conformance: the kit bundle is missing (dist/chimera-conformance.mjs); run `make build` in the project first\n',
  )
  process.exit(1)
}
await import(entry.href)
