/**
 * Layering rules, read from the source: generated/ depends on nothing hand-written; the client
 * SDK never reaches into the server; the wire runtime (client/wire/) depends only on generated/,
 * and the server and the kit reach into client/ only through it; the server never imports the
 * test kit; inside server/ the layers (platform, core, wire, dialects, transports: listed below)
 * import only downwards, and the language servers never import the tools; no `console.*`
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
      /(?:^|\n)\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g,
    ),
  ].map((m) => (m[1] ?? m[2] ?? m[3])!)
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

  it('client/wire/ (the wire runtime the server, the clients and the kit share) imports only generated/ and itself', () => {
    const bad = sources(join('client', 'wire')).flatMap((f) =>
      importsOf(f)
        .filter((s) =>
          s.startsWith('.')
            ? !resolvesInto(f, s, join('client', 'wire')) && !resolvesInto(f, s, 'generated')
            : s !== 'zod' && !s.startsWith('node:'),
        )
        .map((s) => `${f} → ${s}`),
    )
    expect(bad).toEqual([])
  })

  it('server/ and conformance/ reach into client/ only through the wire runtime (client/wire/)', () => {
    const bad = [...sources('server'), ...sources('conformance')].flatMap((f) =>
      importsOf(f)
        .filter((s) => resolvesInto(f, s, 'client') && !resolvesInto(f, s, join('client', 'wire')))
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

  // The layers of server/, bottom to top; imports point down, never up:
  //   1. platform   — what the rest stands on in the OS: the process supervisor, the tool-process
  //                   environment, path containment (server/platform). Imports no other layer.
  //   2. core       — the agent core and what it stands on: sessions, store, events, tools, LSP,
  //                   providers, agents, commands, MCP, runs, share (and the root modules: log,
  //                   validation, version). Never imports the wire runtime, a dialect or a transport.
  //   3. wire       — the server's side of the wire runtime: the typed dispatcher and the typed
  //                   peer (server/jsonrpc), over the shared runtime in client/wire (framer,
  //                   JSON-RPC connection, HTTP pipeline), which imports nothing of server/ (its
  //                   own test above). Never imports a dialect or a transport.
  //   4. dialects   — map the core onto a protocol: ACP (server/acp) and the JSON-lines RPC
  //                   (server/rpc). Never import a transport.
  //   5. transports — carry a dialect or the HTTP routes to a peer, and the CLI that starts them
  //                   (server/http, server/cli, and the cloud bridge's link and relay, server/bridge).
  // Inside the core, the language servers never import the tools (the tools use LSP, not the reverse).
  const PLATFORM = ['platform']
  const CORE = ['core', 'store', 'events', 'tools', 'lsp', 'providers', 'agents', 'commands', 'mcp', 'runs', 'share']
  const WIRE = ['jsonrpc']
  const DIALECTS = ['acp', 'rpc']
  const TRANSPORTS = ['http', 'cli', 'bridge']
  const LAYERS = [PLATFORM, CORE, WIRE, DIALECTS, TRANSPORTS]
  // Compile-time checks (`*.typecheck.ts`: every surface's error table is exhaustive) stand above
  // the layers, like tests; they are not product modules.
  const ROOT_MODULES = readdirSync(join(root, 'server'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.typecheck.ts'))
    .map((f) => join('server', f))
  const filesOf = (dirs: string[]): string[] => dirs.flatMap((d) => sources(join('server', d)))
  const violations = (files: string[], to: string[]): string[] =>
    files.flatMap((f) =>
      importsOf(f)
        .filter((s) => to.some((t) => resolvesInto(f, s, join('server', t))))
        .map((s) => `${f} → ${s}`),
    )
  const layerImports = (from: string[], to: string[]): string[] => violations(filesOf(from), to)

  it('every folder of server/ is in exactly one layer', () => {
    const folders = readdirSync(join(root, 'server'), { withFileTypes: true })
      .filter((d) => d.isDirectory() && !['dist', 'node_modules', 'bin'].includes(d.name))
      .map((d) => d.name)
      .sort()
    expect(LAYERS.flat().sort()).toEqual(folders)
  })

  it('the platform imports no other layer', () => {
    expect(layerImports(PLATFORM, [...CORE, ...WIRE, ...DIALECTS, ...TRANSPORTS])).toEqual([])
  })

  it('the core (and the root modules) never imports the wire runtime, a dialect or a transport', () => {
    const up = [...WIRE, ...DIALECTS, ...TRANSPORTS]
    expect([...layerImports(CORE, up), ...violations(ROOT_MODULES, up)]).toEqual([])
  })

  it('the wire runtime never imports a dialect or a transport', () => {
    expect(layerImports(WIRE, [...DIALECTS, ...TRANSPORTS])).toEqual([])
  })

  it('dialects never import a transport', () => {
    expect(layerImports(DIALECTS, TRANSPORTS)).toEqual([])
  })

  it('the language servers never import the tools (no lsp ↔ tools cycle)', () => {
    expect(layerImports(['lsp'], ['tools'])).toEqual([])
  })

  it('the layer rule can fail: a core file importing a dialect or the wire runtime is caught', () => {
    expect(resolvesInto('server/core/x.ts', '../acp/v1/agent.ts', 'server/acp')).toBe(true)
    expect(resolvesInto('server/core/x.ts', '../jsonrpc/errors.ts', 'server/jsonrpc')).toBe(true)
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
