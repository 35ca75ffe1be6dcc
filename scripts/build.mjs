// Bundles the CLI into dist/ with esbuild so `chimera` starts without a TypeScript loader, and
// the conformance kit on its own (dist/chimera-conformance.mjs, for bin/chimera-conformance.mjs).
// Code splitting keeps `chimera --help` from loading the transports it does not run.
import { build } from 'esbuild'
import { rmSync } from 'node:fs'

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true })
await build({
  entryPoints: { chimera: 'server/cli/main.ts', 'chimera-conformance': 'conformance/kit/cli/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  legalComments: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  // CommonJS dependencies bundled into ESM need a `require` in scope.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  logLevel: 'warning',
})
