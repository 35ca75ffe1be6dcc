// The esbuild bundles, one function each, shared by the checkout's build (scripts/build.mjs,
// into dist/ at the root: what bin/ and the tests run) and the packages' builds
// (scripts/build-package.mjs, into client/dist, conformance/dist and server/dist at `npm pack`).
import { build } from 'esbuild'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
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
 * zod as our own code imports it, in the CLI's bundle: a facade that loads zod on its first call,
 * synchronously, from a CommonJS build of it beside the chunks (`chunks/zod.cjs`). The generated
 * validators' plain checks accept valid input without building a zod schema
 * (docs/decisions/0450-plain-checks-before-zod.md), so a start-up that meets only valid input
 * never loads zod at all (docs/decisions/0460-zod-loaded-on-first-use.md). The facade exports
 * the members our code calls; one it lacks fails the build.
 */
const ZOD_MEMBERS = [
  'any',
  'array',
  'boolean',
  'discriminatedUnion',
  'enum',
  'intersection',
  'literal',
  'null',
  'number',
  'object',
  'partialRecord',
  'record',
  'string',
  'tuple',
  'union',
  'unknown',
]
export const ZOD_FILE = 'zod.cjs'
/** A facade's exports: each member a function that calls `loaded` (an expression) for its module first. */
const forwarders = (members, loaded) =>
  `${members.map((m) => `const _${m} = (...a) => ${loaded}.${m}(...a)`).join('\n')}
export { ${members.map((m) => `_${m} as ${m}`).join(', ')} }
`
const ZOD_FACADE = `import { createRequire } from 'node:module'
let zod
function load() {
  if (zod) return zod
  const req = createRequire(import.meta.url)
  // The facade's chunk sits in chunks/ or beside it.
  for (const file of ['./${ZOD_FILE}', './chunks/${ZOD_FILE}']) {
    try {
      return (zod = req(file))
    } catch (err) {
      if (err?.code !== 'MODULE_NOT_FOUND') throw err
    }
  }
  throw new Error('chimera: ${ZOD_FILE} is missing beside the bundle; run make build')
}
${forwarders(ZOD_MEMBERS, 'load()')}`
const lazyZod = {
  name: 'lazy-zod',
  setup(b) {
    b.onResolve({ filter: /^zod$/ }, (args) =>
      args.pluginData?.zodCopy || args.namespace !== 'file' || /[\\/]node_modules[\\/]/.test(args.importer)
        ? undefined
        : { path: 'zod-facade', namespace: 'lazy-zod' },
    )
    b.onLoad({ filter: /.*/, namespace: 'lazy-zod' }, () => ({ contents: ZOD_FACADE, loader: 'js', resolveDir: root }))
  },
}

/**
 * Node built-ins a bundled dependency imports by name, forwarded to `process.getBuiltinModule` on
 * the first call: Node 24 builds the whole namespace of an ESM-imported built-in, reading its lazy
 * getters (`import { parseArgs } from 'node:util'`, citty's, loads `worker_threads` and the assert
 * diff with it), before the importing chunk runs. Our own code calls the accessors of
 * server/platform/builtins.ts instead (docs/decisions/0465-built-ins-after-the-answer.md). Only
 * the functions listed are forwarded; a named import of another fails the build.
 */
const LAZY_BUILTINS = { 'node:util': ['parseArgs'] }
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    const filter = new RegExp(`^(${Object.keys(LAZY_BUILTINS).join('|')})$`)
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'lazy-builtin' }))
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: forwarders(LAZY_BUILTINS[args.path], `process.getBuiltinModule('${args.path}')`),
      loader: 'js',
    }))
  },
}

/** zod as one CommonJS file (what the facade loads), into `outdir/chunks`. */
async function buildZodFile(outdir) {
  await build({
    // Only the members the facade forwards: the rest of zod (its 40-odd locales) is left out.
    stdin: { contents: `export { ${ZOD_MEMBERS.join(', ')} } from 'zod'`, resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'linked',
    outfile: join(outdir, 'chunks', ZOD_FILE),
    logLevel: 'warning',
  })
}

/**
 * Node programs: every dependency bundled (code splitting keeps `chimera --help` from loading the
 * transports it does not run). What stays outside is resolved at run time from the bundle's
 * location: ripgrep's platform binary, the language servers (server/lsp/servers.ts).
 *
 * A build of the CLI is then re-chunked for start-up (`mergeStartUpChunks`).
 */
export async function buildNode(entryPoints, outdir, { plugins = [], ...extra } = {}) {
  const merge = Object.values(entryPoints).includes(CLI_ENTRY.chimera)
  const esbuildDir = merge ? mkdtempSync(join(tmpdir(), 'chimera-esbuild-')) : outdir
  try {
    const result = await build({
      entryPoints,
      outdir: esbuildDir,
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
      plugins: [...plugins, ...(merge ? [lazyZod, lazyBuiltins] : []), thirdPartyZod],
      logLevel: 'warning',
      metafile: merge,
      ...extra,
    })
    if (merge) {
      await mergeStartUpChunks(entryPoints, result.metafile, esbuildDir, outdir)
      await buildZodFile(outdir)
    }
    return result
  } finally {
    if (merge) rmSync(esbuildDir, { recursive: true, force: true })
  }
}

/**
 * What each surface loads before its first answer: the command's module and the modules it
 * imports dynamically on the way (docs/decisions/0411-start-up-chunks.md). A stale list costs
 * start-up time, not correctness; a source that is no longer a dynamic entry fails the build.
 */
export const START_UP_PATHS = {
  help: ['server/cli/main.ts'],
  'acp-initialize': ['server/cli/main.ts', 'server/cli/ferret.ts'],
  'acp-session': [
    'server/cli/main.ts',
    'server/cli/ferret.ts',
    'server/cli/session-flags.ts',
    'server/store/paths.ts',
    'server/cli/agent-process.ts',
    'server/acp/v1-dialect.ts',
  ],
  rpc: ['server/cli/main.ts', 'server/cli/code.ts', 'server/rpc/run-rpc.ts'],
  // `otter serve` binds (and answers a liveness probe) before the agent core and the app load.
  'http-listen': [
    'server/cli/main.ts',
    'server/cli/otter.ts',
    'server/store/paths.ts',
    'server/cli/serve-http.ts',
    'server/store/home-probe.ts',
    'server/http/listen.ts',
  ],
  http: [
    'server/cli/main.ts',
    'server/cli/otter.ts',
    'server/cli/session-flags.ts',
    'server/store/paths.ts',
    'server/cli/agent-process.ts',
    'server/cli/serve-http.ts',
    'server/store/home-probe.ts',
    'server/http/server-app.ts',
    'server/http/listen.ts',
    'server/http/node-handler.ts',
  ],
}

/**
 * esbuild splits a bundle into one chunk per set of entries (the program's entries and every
 * dynamic `import()`) that reach the same code: ~60 files before `session/new` is answered, ~75
 * before the HTTP server's first 200, and each costs Node ~0.3 ms to resolve, read, compile and
 * link. This puts the chunks of the esbuild output in `from` together by the start-up paths that
 * load them (two chunks that every path of START_UP_PATHS loads or skips alike become one
 * file: no path loads a byte more) and writes the result, by rollup, to `outdir`. Chunks no
 * start-up path loads (what loads on first use: the YAML parser, the ACP SDK, the renderers, ...)
 * keep rollup's own split, which follows the same dynamic imports as esbuild's.
 */
/**
 * esbuild's banner gives every chunk its own `require` (`createRequire(import.meta.url)`), which the
 * CommonJS dependencies bundled into it call; a merged chunk holds one per esbuild chunk (some 60
 * before `session/new`), most of them never called, and each builds a Module and its lookup
 * paths at load. This drops the ones a chunk never names again.
 */
const dropUnusedRequire = {
  name: 'drop-unused-require',
  renderChunk(code) {
    const out = code.replace(/const (require\$?\w*) = createRequire\(import\.meta\.url\);\n?/g, (decl, id) => {
      const uses = code.match(new RegExp(`(?<![\\w$.])${id.replace('$', '\\$')}(?![\\w$])`, 'g'))?.length ?? 0
      return uses > 1 ? decl : ''
    })
    return out === code ? null : { code: out, map: null }
  },
}

async function mergeStartUpChunks(entryPoints, metafile, from, outdir) {
  const { rollup } = await import('rollup')
  const outputs = Object.entries(metafile.outputs).filter(([f]) => f.endsWith('.mjs'))
  const byEntry = new Map(outputs.filter(([, o]) => o.entryPoint).map(([f, o]) => [o.entryPoint, resolve(root, f)]))
  const imports = new Map(
    outputs.map(([f, o]) => [
      resolve(root, f),
      o.imports.filter((i) => i.kind === 'import-statement' && !i.external).map((i) => resolve(root, i.path)),
    ]),
  )
  const reach = (file, seen) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const i of imports.get(file) ?? []) reach(i, seen)
  }
  /** Output file → the start-up paths that load it. */
  const paths = new Map()
  for (const [name, sources] of Object.entries(START_UP_PATHS)) {
    const seen = new Set()
    for (const src of sources) {
      const file = byEntry.get(src)
      if (!file) throw new Error(`START_UP_PATHS.${name}: ${src} is no entry of this build (a dynamic import moved?)`)
      reach(file, seen)
    }
    for (const file of seen) paths.set(file, [...(paths.get(file) ?? []), name])
  }
  const entries = new Set(Object.values(entryPoints).map((src) => byEntry.get(src)))
  const bundle = await rollup({
    input: Object.fromEntries(Object.keys(entryPoints).map((name) => [name, join(from, `${name}.mjs`)])),
    treeshake: false,
    external: (id) => !id.startsWith('.') && !id.startsWith('/'),
    onwarn: (w, warn) => {
      // esbuild's chunks import each other in cycles, and keep imports of names the minifier dropped.
      if (w.code !== 'CIRCULAR_DEPENDENCY' && w.code !== 'UNUSED_EXTERNAL_IMPORT') warn(w)
    },
  })
  try {
    await bundle.write({
      dir: outdir,
      format: 'es',
      entryFileNames: '[name].mjs',
      chunkFileNames: 'chunks/[name]-[hash].mjs',
      compact: true,
      plugins: [dropUnusedRequire],
      manualChunks: (id) => (entries.has(id) || !paths.has(id) ? undefined : `start-${paths.get(id).join('+')}`),
    })
  } finally {
    await bundle.close()
  }
  // The licence texts the chunks' closing comments point at, beside them as before.
  for (const dir of ['', 'chunks']) {
    for (const f of readdirSync(join(from, dir)).filter((n) => n.endsWith('.LEGAL.txt')))
      copyFileSync(join(from, dir, f), join(outdir, dir, f))
  }
}

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
