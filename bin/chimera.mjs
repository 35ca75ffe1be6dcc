#!/usr/bin/env node
// The `chimera` command: runs the bundled CLI (built by `npm run build` / `make build`).
import { existsSync } from 'node:fs'
import module from 'node:module'

const entry = new URL('../dist/chimera.mjs', import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write('chimera: the CLI bundle is missing (dist/chimera.mjs); run `make build` in the project first\n')
  process.exit(1)
}
// Node 22.1+ keeps the bundle's compiled code in its compile cache (under os.tmpdir();
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), which halves the module loading of the next start.
// Node 20 has no such cache.
module.enableCompileCache?.()
await import(entry.href)
