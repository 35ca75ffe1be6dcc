// Builds the npm packages' own dist/ folders (run by each package's `prepack`, and for all three
// by scripts/build.mjs): `node scripts/build-package.mjs [client] [conformance] [server]`.
//   server/dist       the `chimera` CLI (every dependency bundled but ripgrep's binary), dist/ui and
//                     dist/docs (the API reference pages of docs/reference/)
//   conformance/dist  the kit's two bins (`chimera-conformance`, `chimera-model-double`)
//   client/dist       the SDK's entries (index.js, node.js, msw.js; dependencies left to the
//                     consumer) and their declarations, bundled by rollup-plugin-dts with the
//                     generated types inlined, so nothing in them points outside the package
//                     (decision 0201); `--no-types` skips them (the checkout's fast build).
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { CLI_ENTRY, DOUBLE_ENTRY, KIT_ENTRY, buildClient, buildNode, buildUi, clean, root } from './bundles.mjs'

async function clientTypes(outdir) {
  const [{ rollup }, { dts }] = await Promise.all([import('rollup'), import('rollup-plugin-dts')])
  const bundle = await rollup({
    input: {
      index: join(root, 'client/index.ts'),
      node: join(root, 'client/node/index.ts'),
      msw: join(root, 'client/msw/index.ts'),
    },
    plugins: [dts({ tsconfig: join(root, 'tsconfig.json') })],
    // Bare specifiers are the package's dependencies and peers; relative ones are inlined.
    external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  })
  await bundle.write({ dir: outdir, format: 'es', chunkFileNames: '[name]-[hash].d.ts' })
  await bundle.close()
}

export async function buildPackage(name, { types = true } = {}) {
  const dist = join(root, name, 'dist')
  clean(dist)
  if (name === 'server') {
    await buildNode(CLI_ENTRY, dist)
    await buildUi(join(dist, 'ui'))
    // The API reference pages (`/docs`), rendered into docs/reference/ by `make docs`.
    cpSync(join(root, 'docs', 'reference'), join(dist, 'docs'), { recursive: true })
  } else if (name === 'conformance') {
    await buildNode({ ...KIT_ENTRY, ...DOUBLE_ENTRY }, dist)
  } else if (name === 'client') {
    await buildClient(dist, '.js')
    if (types) await clientTypes(dist)
  } else {
    throw new Error(`unknown package ${name} (client, conformance or server)`)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const names = args.filter((a) => !a.startsWith('--'))
  for (const name of names.length ? names : ['client', 'conformance', 'server'])
    await buildPackage(name, { types: !args.includes('--no-types') })
}
