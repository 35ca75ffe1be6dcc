// Bundles with esbuild: the CLI into dist/ so `chimera` starts without a TypeScript loader
// (code splitting keeps `chimera --help` from loading the transports it does not run), the
// conformance kit on its own (dist/chimera-conformance.mjs, for bin/chimera-conformance.mjs), the
// client SDK's package entries into dist/client/ (`chimera/client`, `chimera/client/node`,
// `chimera/client/msw`; dependencies stay imports), and the web console into dist/ui/. Declarations
// come from scripts/build-client-types.mjs (tsc, slower), into dist/types/, which this script keeps.
import { build } from 'esbuild'
import { copyFileSync, readdirSync, rmSync } from 'node:fs'

const dist = new URL('../dist/', import.meta.url)
for (const entry of (() => {
  try {
    return readdirSync(dist)
  } catch {
    return []
  }
})()) {
  if (entry !== 'types') rmSync(new URL(entry, dist), { recursive: true, force: true })
}

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

// The SDK as a package: readable output, its dependencies left to the consumer's resolver.
const sdk = { bundle: true, format: 'esm', packages: 'external', outdir: 'dist/client', outExtension: { '.js': '.mjs' }, logLevel: 'warning', target: 'es2022' }
await build({ ...sdk, entryPoints: { index: 'client/index.ts' }, platform: 'neutral' })
await build({ ...sdk, entryPoints: { msw: 'client/msw/index.ts' }, platform: 'neutral' })
await build({ ...sdk, entryPoints: { node: 'client/node/index.ts' }, platform: 'node', target: 'node20' })

// The web console (`/ui`): one browser bundle of client/ui/main.ts (the SDK included, no
// Node imports, no CDN) beside its static page and stylesheet; the HTTP server serves dist/ui/.
await build({ entryPoints: { app: 'client/ui/main.ts' }, outdir: 'dist/ui', bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, legalComments: 'linked', logLevel: 'warning' })
for (const file of ['index.html', 'app.css', 'icon.svg']) copyFileSync(new URL(`../client/ui/${file}`, import.meta.url), new URL(`../dist/ui/${file}`, import.meta.url))
