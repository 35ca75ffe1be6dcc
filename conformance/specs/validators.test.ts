/**
 * Spec checks: every spec passes its own ecosystem's validator (and each validator is shown to
 * fail on a deliberately broken copy), generated/ is in sync with specs/ and deterministic, the
 * assembled ACP v1 OpenRPC document is current, the vendored ACP schema is the installed SDK's,
 * and every generated file says where it came from.
 */
import { createHash } from 'node:crypto'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  existsSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'
import { lintOpenApi, validateAll, validateAsyncApi, validateOpenRpc } from '../../specs/codegen/validate.ts'
import { drift, renderAll } from '../../specs/codegen/generate.ts'
import { renderAcpV1 } from '../../specs/codegen/acp-v1-openrpc.ts'
import { ROOT, abs } from '../../specs/codegen/lib/files.ts'

const OPENAPI = 'specs/openapi/chimera.openapi.yaml'
const SSE = 'specs/asyncapi/sse.asyncapi.yaml'
const RPC = 'specs/asyncapi/rpc.asyncapi.yaml'
const BRIDGE = 'specs/asyncapi/bridge.asyncapi.yaml'
const INSTANCES = 'specs/asyncapi/instances.asyncapi.yaml'
const ACP_V1 = 'specs/openrpc/acp-v1.openrpc.json'
const ACP_SEED = 'specs/openrpc/acp-seed.openrpc.yaml'

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

// ---------------------------------------------------------------- temp mirrors of specs/
const tempRoots: string[] = []
afterAll(() => {
  for (const dir of tempRoots) rmSync(dir, { recursive: true, force: true })
})

/**
 * A fresh temp dir laid out like the repo (`specs/schemas`, `specs/vendor` copied) so a copied
 * spec's relative `$ref`s keep resolving. Returns the temp root.
 */
function mirror(): string {
  const root = mkdtempSync(join(tmpdir(), 'chimera-spec-check-'))
  tempRoots.push(root)
  cpSync(abs('specs/schemas'), join(root, 'specs/schemas'), { recursive: true })
  cpSync(abs('specs/vendor'), join(root, 'specs/vendor'), { recursive: true })
  return root
}

/** Copy spec `rel` into mirror `root`, passing its text (or parsed document) through `edit`. */
function copySpec(root: string, rel: string, edit?: (doc: any) => void): string {
  const target = join(root, rel)
  mkdirSync(dirname(target), { recursive: true })
  const text = readFileSync(abs(rel), 'utf8')
  if (!edit) writeFileSync(target, text)
  else {
    const doc = rel.endsWith('.json') ? JSON.parse(text) : parse(text)
    edit(doc)
    writeFileSync(target, rel.endsWith('.json') ? JSON.stringify(doc, null, 2) : stringify(doc))
  }
  return target
}

// ---------------------------------------------------------------- each spec validates
describe('every spec passes its ecosystem validator', () => {
  it(`${OPENAPI} passes the Redocly lint (minimal + struct + no-unresolved-refs)`, async () => {
    expect(await lintOpenApi(abs(OPENAPI))).toEqual([])
  })
  it(`${SSE} passes @asyncapi/parser with no error diagnostics`, async () => {
    expect(await validateAsyncApi(abs(SSE))).toEqual([])
  })
  it(`${RPC} passes @asyncapi/parser with no error diagnostics`, async () => {
    expect(await validateAsyncApi(abs(RPC))).toEqual([])
  })
  it(`${ACP_V1} passes the OpenRPC meta-schema and all its $refs resolve`, async () => {
    expect(await validateOpenRpc(abs(ACP_V1))).toEqual([])
  })
  it(`${ACP_SEED} passes the OpenRPC meta-schema and all its $refs resolve`, async () => {
    expect(await validateOpenRpc(abs(ACP_SEED))).toEqual([])
  })
  it('`tsx specs/codegen/validate.ts` (make lint-specs) exits 0 on the committed specs', () => {
    const r = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), ['specs/codegen/validate.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    expect(r.stderr).toContain('all 7 specs valid')
    expect(r.status).toBe(0)
  })
})

// ---------------------------------------------------------------- each validator can fail
describe('each validator reports a deliberately broken copy', () => {
  it('lintOpenApi reports `responsez:` in place of `responses:`', async () => {
    const root = mirror()
    expect(await lintOpenApi(copySpec(root, OPENAPI))).toEqual([]) // the untouched copy is clean in the mirror
    const broken = copySpec(root, OPENAPI, (doc) => {
      const op = doc.paths['/health'].get
      op.responsez = op.responses
      delete op.responses
    })
    const problems = await lintOpenApi(broken)
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.some((p) => p.includes('responsez'))).toBe(true)
  })

  it('lintOpenApi reports a dangling `$ref` into specs/schemas', async () => {
    const root = mirror()
    const broken = copySpec(root, OPENAPI, (doc) => {
      doc.components.schemas.Dangling = { $ref: '../schemas/common.yaml#/NoSuchShape' }
      doc.paths['/health'].get.responses['200'].content['application/json'].schema = {
        $ref: '#/components/schemas/Dangling',
      }
    })
    const problems = await lintOpenApi(broken)
    expect(problems.some((p) => p.includes('no-unresolved-refs'))).toBe(true)
  })

  it('validateAsyncApi reports `action: listen`', async () => {
    const root = mirror()
    expect(await validateAsyncApi(copySpec(root, SSE))).toEqual([])
    const broken = copySpec(root, SSE, (doc) => {
      doc.operations.receiveSessionsEvents.action = 'listen'
    })
    const problems = await validateAsyncApi(broken)
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.some((p) => p.includes('"action"') && p.includes('/operations/receiveSessionsEvents/action'))).toBe(
      true,
    )
  })

  it('validateAsyncApi reports a missing file', async () => {
    const problems = await validateAsyncApi(join(mirror(), 'specs/asyncapi/absent.yaml'))
    expect(problems).toHaveLength(1)
  })

  it('validateOpenRpc reports a method missing `name` (meta-schema)', async () => {
    const root = mirror()
    expect(await validateOpenRpc(copySpec(root, ACP_SEED))).toEqual([])
    const broken = copySpec(root, ACP_SEED, (doc) => {
      const m = doc.methods.find((x: any) => x.name === 'session/new')
      delete m.name
    })
    const problems = await validateOpenRpc(broken)
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.some((p) => p.includes('OpenRPC meta-schema'))).toBe(true)
  })

  it('validateOpenRpc reports a dangling relative file `$ref` (../schemas/…)', async () => {
    const root = mirror()
    const broken = copySpec(root, ACP_SEED, (doc) => {
      doc.methods.find((x: any) => x.name === 'session/load').params[0].schema = {
        $ref: '../schemas/common.yaml#/NoSuchShape',
      }
    })
    const problems = await validateOpenRpc(broken)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('../schemas/common.yaml#/NoSuchShape')
  })

  it('validateOpenRpc reports a dangling local `$ref` (#/components/…)', async () => {
    const root = mirror()
    const broken = copySpec(root, ACP_SEED, (doc) => {
      doc.methods.find((x: any) => x.name === 'session/list').result.schema = {
        $ref: '#/components/schemas/NoSuchResult',
      }
    })
    const problems = await validateOpenRpc(broken)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('#/components/schemas/NoSuchResult')
  })

  it('validateOpenRpc reports a dangling `$ref` into the vendored ACP schema', async () => {
    const root = mirror()
    expect(await validateOpenRpc(copySpec(root, ACP_V1))).toEqual([])
    const broken = copySpec(root, ACP_V1, (doc) => {
      doc.methods.find((x: any) => x.name === 'session/prompt')['x-params-schema'] = {
        $ref: '../vendor/acp/schema.v1.json#/$defs/NoSuchRequest',
      }
    })
    const problems = await validateOpenRpc(broken)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('#/$defs/NoSuchRequest')
  })

  it('validateOpenRpc reports a `$ref` to a file that does not exist', async () => {
    const root = mirror()
    const broken = copySpec(root, ACP_SEED, (doc) => {
      doc.methods.find((x: any) => x.name === 'session/load').params[0].schema = {
        $ref: '../schemas/absent.yaml#/SessionId',
      }
    })
    const problems = await validateOpenRpc(broken)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('does not exist')
  })

  it('validateAll (the lint-specs run) collects problems from a broken tree', async () => {
    const root = mirror()
    for (const rel of [OPENAPI, RPC, BRIDGE, INSTANCES, ACP_V1, ACP_SEED]) copySpec(root, rel)
    copySpec(root, SSE, (doc) => {
      doc.operations.receiveSessionEvents.action = 'listen'
    })
    const problems = await validateAll(root)
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.every((p) => p.includes('sse.asyncapi.yaml'))).toBe(true)
  })
})

// ---------------------------------------------------------------- generated/
/** Every file under a repo-relative directory, repo-relative POSIX paths. */
function listTree(dir: string): string[] {
  if (!existsSync(abs(dir))) return []
  return readdirSync(abs(dir)).flatMap((n) => {
    const p = `${dir}/${n}`
    return statSync(abs(p)).isDirectory() ? listTree(p) : [p]
  })
}

/** Source specs each generated TypeScript file must name in its header. */
const GENERATED_SOURCES: Record<string, string[]> = {
  'generated/schemas.gen.ts': ['specs/schemas/common.yaml', 'specs/schemas/events.yaml'],
  'generated/event-facts.gen.ts': ['specs/schemas/common.yaml', 'specs/schemas/events.yaml'],
  'generated/acp/v1-schema.gen.ts': ['specs/vendor/acp/schema.v1.json'],
  'generated/acp/v1-methods.gen.ts': ['specs/openrpc/acp-v1.openrpc.json', 'specs/vendor/acp/schema.v1.json'],
  'generated/acp/v1-constants.gen.ts': ['specs/openrpc/acp-v1.openrpc.json'],
  'generated/acp/seed-constants.gen.ts': ['specs/openrpc/acp-seed.openrpc.yaml'],
  'generated/acp/seed.gen.ts': ['specs/openrpc/acp-seed.openrpc.yaml'],
  'generated/sse/events.gen.ts': ['specs/asyncapi/sse.asyncapi.yaml'],
  'generated/rpc/jsonl.gen.ts': ['specs/asyncapi/rpc.asyncapi.yaml'],
  'generated/bridge/relay.gen.ts': ['specs/asyncapi/bridge.asyncapi.yaml'],
  'generated/instances/forward.gen.ts': ['specs/asyncapi/instances.asyncapi.yaml'],
  'generated/http/routes.gen.ts': ['specs/openapi/chimera.openapi.yaml'],
  'generated/http/openapi.gen.d.ts': ['specs/openapi/chimera.openapi.yaml'],
  'generated/tools/tools.gen.ts': ['specs/tools/tools.yaml'],
  // The generator's own helper (lazySchema), from no spec.
  'generated/lazy-schema.gen.ts': ['specs/codegen/runtime/lazy-schema.ts'],
}

describe('generated/', () => {
  it('is in sync with specs/ (drift() is empty)', async () => {
    expect(await drift()).toEqual([])
  })

  it('renders byte-identically twice in a row (renderAll is deterministic)', async () => {
    const a = await renderAll()
    const b = await renderAll()
    expect(b.map((f) => f.path)).toEqual(a.map((f) => f.path))
    const differing = a.filter((f, i) => f.text !== b[i]!.text).map((f) => f.path)
    expect(differing).toEqual([])
    expect(a.length).toBeGreaterThan(0)
  })

  it('every generated file header names its source spec(s) and `make generate` (JSON outputs: via manifest.json)', () => {
    const problems: string[] = []
    const files = listTree('generated')
    const manifest = JSON.parse(readFileSync(abs('generated/manifest.json'), 'utf8'))
    for (const f of files) {
      if (f === 'generated/manifest.json') continue
      // JSON cannot carry a comment header: its provenance is its entry in manifest.json.
      if (!(f in (manifest.outputs ?? {}))) problems.push(`${f}: not recorded in generated/manifest.json outputs`)
      if (f.endsWith('.json')) continue
      const want = GENERATED_SOURCES[f]
      if (!want) {
        problems.push(`${f}: no expected sources listed for this generated file`)
        continue
      }
      const lines = readFileSync(abs(f), 'utf8').split('\n')
      const head = lines.slice(
        0,
        lines.findIndex((l) => !l.startsWith('//') && !l.startsWith('/*')),
      )
      if (!head[0]?.includes('Generated by `make generate`'))
        problems.push(`${f}: header does not name \`make generate\``)
      const named = head
        .map((l) => /^\/\/\s+(\S+) \(sha256 [0-9a-f]{16}\)$/.exec(l)?.[1])
        .filter((x): x is string => Boolean(x))
      if (JSON.stringify([...named].sort()) !== JSON.stringify([...want].sort()))
        problems.push(`${f}: header names ${JSON.stringify(named)}, want ${JSON.stringify(want)}`)
      for (const src of named)
        if (!existsSync(abs(src))) problems.push(`${f}: header names ${src}, which does not exist`)
    }
    for (const f of Object.keys(GENERATED_SOURCES)) if (!files.includes(f)) problems.push(`${f}: missing`)
    // manifest.json itself records the command and every input.
    if (manifest.command !== 'make generate')
      problems.push(`generated/manifest.json: command is ${JSON.stringify(manifest.command)}`)
    const allSources = [...new Set(Object.values(GENERATED_SOURCES).flat())].sort()
    for (const src of allSources)
      if (!(src in (manifest.inputs ?? {}))) problems.push(`generated/manifest.json: inputs lack ${src}`)
    expect(problems).toEqual([])
  })
})

// ---------------------------------------------------------------- ACP v1 assembly and vendoring
describe('ACP v1 sources', () => {
  it('renderAcpV1() equals the committed specs/openrpc/acp-v1.openrpc.json', () => {
    expect(renderAcpV1() === readFileSync(abs(ACP_V1), 'utf8')).toBe(true)
  })

  it('specs/vendor/vendor.json sha256 equals the installed SDK schema and the vendored copy', () => {
    const vendor = JSON.parse(readFileSync(abs('specs/vendor/vendor.json'), 'utf8'))
    const entry = vendor['acp/schema.v1.json']
    expect(entry.package).toBe('@agentclientprotocol/sdk')
    const installed = abs(`node_modules/@agentclientprotocol/sdk/schema/v1/schema.json`)
    expect(entry.path).toBe('schema/v1/schema.json')
    expect(sha256(installed)).toBe(entry.sha256)
    expect(sha256(abs('specs/vendor/acp/schema.v1.json'))).toBe(entry.sha256)
    const pkg = JSON.parse(readFileSync(abs('node_modules/@agentclientprotocol/sdk/package.json'), 'utf8'))
    expect(pkg.version).toBe(entry.version)
  })
})

// ---------------------------------------------------------------- the instance link's answers
describe(`${INSTANCES}: every session operation's result`, () => {
  const schemas = (parse(readFileSync(abs(INSTANCES), 'utf8')) as { components: { schemas: Record<string, any> } })
    .components.schemas
  /** The `op` values a schema's `oneOf` variants carry (`const` or `enum`). */
  const opsOf = (oneOf: { properties: { op: { const?: string; enum?: string[] } } }[]): string[] =>
    oneOf.flatMap((v) => v.properties.op.enum ?? [v.properties.op.const!]).sort()

  it('is named by SessionResultByOp, one entry per `op` of SessionOp, each required', () => {
    const ops = opsOf(schemas.SessionOp.oneOf)
    expect(ops).toContain('state')
    expect(Object.keys(schemas.SessionResultByOp.properties).sort()).toEqual(ops)
    expect([...schemas.SessionResultByOp.required].sort()).toEqual(ops)
    expect(schemas.SessionResultByOp.additionalProperties).toBe(false)
  })

  it('the rule can fail: an operation added without its result is caught', () => {
    const oneOf = [...schemas.SessionOp.oneOf, { properties: { op: { const: 'rename' } } }]
    expect(opsOf(oneOf)).not.toEqual(Object.keys(schemas.SessionResultByOp.properties).sort())
  })
})
