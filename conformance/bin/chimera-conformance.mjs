#!/usr/bin/env node
// The `chimera-conformance` command of @chimera-agent/conformance: runs its bundle (dist/, built at `npm pack`
// and by `make build` in a checkout).
import { existsSync } from 'node:fs'

const entry = new URL('../dist/chimera-conformance.mjs', import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write(
    'chimera-conformance: the kit bundle is missing (dist/chimera-conformance.mjs); run `make build` in the project first\n',
  )
  process.exit(1)
}
await import(entry.href)
