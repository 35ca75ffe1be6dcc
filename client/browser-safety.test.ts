/**
 * `@chimera-agent/client` (and `@chimera-agent/client/msw`) work in browsers: each entry bundles for
 * `platform: 'browser'` with its dependencies — a Node built-in anywhere in its import graph
 * fails the bundle — and nothing from server/ or client/node/ is pulled in. Prints the size of
 * the browser entry (minified, and gzipped).
 */
import { builtinModules } from 'node:module'
import { gzipSync } from 'node:zlib'
import { build, type Metafile } from 'esbuild'
import { describe, expect, it } from 'vitest'

async function bundle(entry: string): Promise<{ bytes: Uint8Array; meta: Metafile }> {
  const r = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  })
  return { bytes: r.outputFiles[0]!.contents, meta: r.metafile }
}

const nodeOnly = (meta: Metafile): string[] =>
  Object.values(meta.inputs)
    .flatMap((i) => i.imports.map((x) => x.path))
    .filter((p) => p.startsWith('node:') || builtinModules.includes(p))

describe('the browser entries', () => {
  it('@chimera-agent/client bundles for the browser with no Node import, and says how big it is', async () => {
    const { bytes, meta } = await bundle('client/index.ts')
    expect(nodeOnly(meta)).toEqual([])
    expect(Object.keys(meta.inputs).filter((p) => p.startsWith('server/') || p.startsWith('client/node/'))).toEqual([])
    process.stderr.write(
      `@chimera-agent/client browser bundle: ${bytes.length} bytes minified, ${gzipSync(bytes).length} gzipped\n`,
    )
    expect(bytes.length).toBeGreaterThan(0)
  })

  it('@chimera-agent/client/msw bundles for the browser too (msw handlers for a browser test runner)', async () => {
    const { meta } = await bundle('client/msw/index.ts')
    expect(nodeOnly(meta)).toEqual([])
    expect(Object.keys(meta.inputs).filter((p) => p.startsWith('server/'))).toEqual([])
  })

  it('the web console (client/ui/main.ts) bundles for the browser with no Node import, and says how big it is', async () => {
    const { bytes, meta } = await bundle('client/ui/main.ts')
    expect(nodeOnly(meta)).toEqual([])
    expect(Object.keys(meta.inputs).filter((p) => p.startsWith('server/') || p.startsWith('client/node/'))).toEqual([])
    process.stderr.write(`web console bundle: ${bytes.length} bytes minified, ${gzipSync(bytes).length} gzipped\n`)
    // marked + DOMPurify + the SDK: a budget that catches an accidental heavy import.
    expect(bytes.length).toBeLessThan(160_000)
  })

  it('the check can fail: an entry that imports a Node module does not bundle for the browser', async () => {
    await expect(bundle('client/node/index.ts')).rejects.toThrow(/node:child_process|child_process/)
  })
})
