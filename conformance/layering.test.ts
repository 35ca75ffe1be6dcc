/**
 * Layering rules, read from the source: generated/ depends on nothing hand-written; the client
 * SDK never reaches into the server; the server never imports the test kit; inside server/ the
 * core never imports a dialect or a transport and dialects never import a transport; no `console.*`
 * anywhere in server/ or client/ (stdout is the wire on stdio transports), and only the CLI's
 * help/version path writes to process.stdout directly.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
// Product sources: tests and the fixtures only tests load (`fixtures/` folders) are not layered.
const sources = (dir: string): string[] =>
  (readdirSync(join(root, dir), { recursive: true }) as string[])
    .filter(
      (f) =>
        /\.(ts|mjs)$/.test(f) &&
        !f.endsWith('.test.ts') &&
        !f.endsWith('.d.ts') &&
        !/^(dist|node_modules)\//.test(f) &&
        !/(^|\/)fixtures\//.test(f),
    )
    .map((f) => join(dir, f))
const importsOf = (file: string): string[] =>
  [
    ...readFileSync(join(root, file), 'utf8').matchAll(
      /(?:^|\n)\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
    ),
  ].map((m) => (m[1] ?? m[2])!)
const resolvesInto = (file: string, spec: string, dir: string): boolean =>
  spec.startsWith('.') && relative(join(root, dir), join(root, file, '..', spec)).split('/')[0] !== '..'

describe('layering', () => {
  it('generated/ imports only zod and other generated modules', () => {
    const bad = sources('generated').flatMap((f) =>
      importsOf(f)
        .filter((s) => s !== 'zod' && !resolvesInto(f, s, 'generated'))
        .map((s) => `${f} → ${s}`),
    )
    expect(bad).toEqual([])
  })

  it('client/ never imports server/ or conformance/', () => {
    const bad = sources('client').flatMap((f) =>
      importsOf(f)
        .filter((s) => resolvesInto(f, s, 'server') || resolvesInto(f, s, 'conformance'))
        .map((s) => `${f} → ${s}`),
    )
    expect(bad).toEqual([])
  })

  it("server/ never imports the conformance kit (except the CLI entry's subcommand table, which serves the model double and the kit's runner)", () => {
    const allowed = (f: string, s: string): boolean =>
      f === join('server', 'cli', 'subcommands.ts') &&
      (s === '../../conformance/model-double/command.ts' || s === '../../conformance/kit/cli/command.ts')
    const bad = sources('server').flatMap((f) =>
      importsOf(f)
        .filter((s) => resolvesInto(f, s, 'conformance') && !allowed(f, s))
        .map((s) => `${f} → ${s}`),
    )
    expect(bad).toEqual([])
  })

  // The layers of server/, bottom to top: the agent core and what it stands on; the dialects
  // that map it onto a protocol (ACP, JSON-lines RPC); the transports that carry a dialect or the
  // HTTP routes to a peer and the CLI that starts them. Imports point down, never up.
  const CORE = [
    'core',
    'store',
    'events',
    'tools',
    'lsp',
    'providers',
    'agents',
    'commands',
    'mcp',
    'runs',
    'share',
    'framing',
    'jsonrpc',
  ]
  const DIALECTS = ['acp', 'rpc']
  const TRANSPORTS = ['http', 'cli']
  const layerImports = (from: string[], to: string[]): string[] =>
    from
      .flatMap((d) => sources(join('server', d)))
      .flatMap((f) =>
        importsOf(f)
          .filter((s) => to.some((t) => resolvesInto(f, s, join('server', t))))
          .map((s) => `${f} → ${s}`),
      )

  it('the core (and the wire runtime) never imports a dialect or a transport', () => {
    expect(layerImports(CORE, [...DIALECTS, ...TRANSPORTS])).toEqual([])
  })

  it('dialects never import a transport', () => {
    expect(layerImports(DIALECTS, TRANSPORTS)).toEqual([])
  })

  it('the layer rule can fail: a core file importing a dialect is caught', () => {
    expect(resolvesInto('server/core/x.ts', '../acp/v1/agent.ts', 'server/acp')).toBe(true)
    expect(resolvesInto('server/core/x.ts', '../store/types.ts', 'server/acp')).toBe(false)
  })

  it('no console.* in server/ or client/', () => {
    const bad = [...sources('server'), ...sources('client')].filter((f) =>
      /\bconsole\.(log|info|warn|error|debug|trace)\(/.test(readFileSync(join(root, f), 'utf8')),
    )
    expect(bad).toEqual([])
  })

  it('only the CLI entry writes to process.stdout directly', () => {
    const bad = sources('server').filter(
      (f) =>
        /process\.stdout\.write/.test(readFileSync(join(root, f), 'utf8')) && f !== join('server', 'cli', 'main.ts'),
    )
    expect(bad).toEqual([])
  })

  it('the rules can fail: a fake import into server/ from client/ is caught', () => {
    expect(resolvesInto('client/x.ts', '../server/log.ts', 'server')).toBe(true)
    expect(resolvesInto('client/x.ts', './http.ts', 'server')).toBe(false)
  })
})
