/**
 * `make generate`: specs/ → generated/, offline and deterministic. Wipes generated/ and
 * writes every module anew. `--check` renders in memory and exits 1 when generated/ differs
 * (a stale, missing or extra file), changing nothing.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createHash } from 'node:crypto'
import { abs, rel, sha256File } from './lib/files.ts'
import type { GeneratedFile } from './lib/module.ts'
import { generateEventFacts, generateShared, sharedFiles } from './gen-shared.ts'
import { generateAcpV1 } from './gen-acp-v1.ts'
import { generateAcpSeed, ACP_SEED_OPENRPC } from './gen-acp-seed.ts'
import {
  generateBridge,
  generateInstances,
  generateSse,
  generateRpc,
  BRIDGE_SPEC,
  INSTANCES_SPEC,
  SSE_SPEC,
  RPC_SPEC,
} from './gen-asyncapi.ts'
import { generateHttpRoutes, generateHttpTypes, generateOpenApiBundle, OPENAPI_SPEC } from './gen-http.ts'
import { ACP_VENDOR } from './lib/refs.ts'
import { generateTools, TOOLS_SPEC } from './gen-tools.ts'
import { ACP_V1_OPENRPC } from './acp-v1-openrpc.ts'
import { generateBundles } from './gen-bundles.ts'
import { generateLazySchema } from './lib/zod.ts'
import { withPlainChecks } from './lib/plain-checks.ts'

const OUT = 'generated'

export async function renderAll(): Promise<GeneratedFile[]> {
  const rendered: GeneratedFile[] = [
    generateLazySchema(),
    generateShared(),
    generateEventFacts(),
    ...generateAcpV1(),
    ...generateAcpSeed(),
    generateSse(),
    generateRpc(),
    generateBridge(),
    generateInstances(),
    generateTools(),
    generateHttpRoutes(),
    await generateHttpTypes(),
    await generateOpenApiBundle(),
    ...generateBundles(),
  ]
  const files = await withPlainChecks(rendered)
  const inputs = [
    ...sharedFiles(),
    ACP_VENDOR,
    ACP_V1_OPENRPC,
    ACP_SEED_OPENRPC,
    SSE_SPEC,
    RPC_SPEC,
    BRIDGE_SPEC,
    INSTANCES_SPEC,
    OPENAPI_SPEC,
    TOOLS_SPEC,
    'specs/codegen/runtime/lazy-schema.ts',
  ]
  // The generators' versions as installed (the lockfile covers the workspace root and its packages).
  const lock = JSON.parse(readFileSync(abs('package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>
  }
  const manifest = {
    command: 'make generate',
    inputs: Object.fromEntries(inputs.map((i) => [i, sha256File(i)])),
    generators: Object.fromEntries(
      ['json-schema-to-zod', 'openapi-typescript', 'zod'].map((n) => [n, lock.packages[`node_modules/${n}`]?.version]),
    ),
    outputs: Object.fromEntries(files.map((f) => [f.path, createHash('sha256').update(f.text).digest('hex')])),
  }
  files.push({ path: `${OUT}/manifest.json`, text: `${JSON.stringify(manifest, null, 2)}\n` })
  return files
}

function listTree(dir: string): string[] {
  if (!existsSync(abs(dir))) return []
  return readdirSync(abs(dir)).flatMap((n) => {
    const p = join(dir, n)
    return statSync(abs(p)).isDirectory() ? listTree(p) : [p.split('\\').join('/')]
  })
}

/** Paths under generated/ whose content differs from a fresh render (missing, stale or extra). */
export async function drift(): Promise<string[]> {
  const files = await renderAll()
  const want = new Map(files.map((f) => [f.path, f.text]))
  const diffs: string[] = []
  for (const [p, text] of want) {
    if (!existsSync(abs(p))) diffs.push(`missing ${p}`)
    else if (readFileSync(abs(p), 'utf8') !== text) diffs.push(`stale ${p}`)
  }
  for (const p of listTree(OUT)) if (!want.has(p)) diffs.push(`extra ${p}`)
  return diffs
}

async function main(): Promise<void> {
  if (process.argv.includes('--check')) {
    const d = await drift()
    if (d.length) {
      process.stderr.write(`generated/ is out of step with specs/ — run \`make generate\`:\n  ${d.join('\n  ')}\n`)
      process.exit(1)
    }
    process.stderr.write('generated/ matches specs/\n')
    return
  }
  const files = await renderAll()
  rmSync(abs(OUT), { recursive: true, force: true })
  for (const f of files) {
    mkdirSync(dirname(abs(f.path)), { recursive: true })
    writeFileSync(abs(f.path), f.text)
  }
  process.stderr.write(`wrote ${files.length} files to ${rel(abs(OUT))}/\n`)
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) await main()
