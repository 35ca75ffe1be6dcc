// The esbuild bundles, one function each, shared by the checkout's build (scripts/build.mjs,
// into dist/ at the root: what bin/ and the tests run) and the packages' builds
// (scripts/build-package.mjs, into client/dist, conformance/dist and server/dist at `npm pack`).
import { build } from 'esbuild'
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('..', import.meta.url))

/** Empties `dir` (made if missing), keeping the entries named in `keep`. */
export function clean(dir, keep = []) {
  mkdirSync(dir, { recursive: true })
  for (const entry of readdirSync(dir))
    if (!keep.includes(entry)) rmSync(join(dir, entry), { recursive: true, force: true })
}

/**
 * zod as the dependencies import it (the AI SDK, the MCP SDK: `import { z } from 'zod'`, which
 * keeps every export of zod, its 40-odd locales included) resolves into a copy of its own, in a
 * chunk that loads with those dependencies. Chimera's own code (`import * as z from 'zod'`) then
 * gets only the zod it uses, and the start-up path compiles ~100 KiB of zod instead of 450.
 * Nothing crosses between the two copies: the providers hand the AI SDK JSON Schema, not zod.
 */
const thirdPartyZod = {
  name: 'third-party-zod',
  setup(b) {
    b.onResolve({ filter: /^zod(\/.*)?$/ }, async (args) => {
      if (args.pluginData?.zodCopy || !/[\\/]node_modules[\\/]/.test(args.importer)) return undefined
      const r = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: { zodCopy: true },
      })
      return r.errors.length ? { errors: r.errors } : { path: r.path, namespace: 'zod-copy' }
    })
    b.onResolve({ filter: /^\./, namespace: 'zod-copy' }, (args) => ({
      path: resolve(args.resolveDir, args.path),
      namespace: 'zod-copy',
    }))
    b.onLoad({ filter: /.*/, namespace: 'zod-copy' }, (args) => ({
      contents: readFileSync(args.path, 'utf8'),
      loader: 'js',
      resolveDir: dirname(args.path),
    }))
  },
}

/**
 * Node programs: every dependency bundled (code splitting keeps `chimera --help` from loading the
 * transports it does not run). What stays outside is resolved at run time from the bundle's
 * location: ripgrep's platform binary, the language servers (server/lsp/servers.ts).
 */
export const buildNode = (entryPoints, outdir, { plugins = [], ...extra } = {}) =>
  build({
    entryPoints,
    outdir,
    absWorkingDir: root,
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
    plugins: [...plugins, thirdPartyZod],
    logLevel: 'warning',
    ...extra,
  })

export const CLI_ENTRY = { chimera: 'server/cli/main.ts' }
export const KIT_ENTRY = { 'chimera-conformance': 'conformance/kit/cli/main.ts' }
export const DOUBLE_ENTRY = { 'chimera-model-double': 'conformance/model-double/main.ts' }

/**
 * The client SDK's entries (`.`, `./node`, `./msw`): readable ESM, dependencies left to the
 * consumer's resolver. `ext` is the output extension (`.mjs` in the checkout, `.js` in the package).
 */
export async function buildClient(outdir, ext = '.mjs') {
  const sdk = {
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    packages: 'external',
    outdir,
    outExtension: { '.js': ext },
    logLevel: 'warning',
    target: 'es2022',
  }
  await build({ ...sdk, entryPoints: { index: 'client/index.ts' }, platform: 'neutral' })
  await build({ ...sdk, entryPoints: { msw: 'client/msw/index.ts' }, platform: 'neutral' })
  await build({ ...sdk, entryPoints: { node: 'client/node/index.ts' }, platform: 'node', target: 'node20' })
}

/**
 * The web console (`/ui`): one browser bundle of client/ui/main.ts (the SDK included, no Node
 * imports, no CDN) beside its static page and stylesheet; the HTTP server serves `<outdir>`.
 */
export async function buildUi(outdir) {
  await build({
    absWorkingDir: root,
    entryPoints: { app: 'client/ui/main.ts' },
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'linked',
    logLevel: 'warning',
  })
  for (const file of ['index.html', 'app.css', 'icon.svg'])
    copyFileSync(join(root, 'client/ui', file), join(outdir, file))
}
