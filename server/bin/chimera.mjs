#!/usr/bin/env node
// The `chimera` command of @chimera-agent/cli: runs the bundled CLI (dist/, built at `npm pack`
// and by `make build` in a checkout).
import { existsSync } from 'node:fs'

const entry = new URL('../dist/chimera.mjs', import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write('chimera: the CLI bundle is missing (dist/chimera.mjs); run `make build` in the project first\n')
  process.exit(1)
}
await import(entry.href)
