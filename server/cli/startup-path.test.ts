/**
 * The modules `chimera ferret serve` / `otter serve --acp` load before answering `initialize`
 * (docs/decisions/0140): the static imports of the serve commands, read from esbuild's
 * metafile, reach no validator library, no generated validator, no core and no LSP client.
 * A static import of one of them on that path undoes the lazy start; this names the chain.
 *
 * `chimera otter serve` binds its port and answers a liveness probe before the agent core and the
 * HTTP app load (docs/decisions/0445-listen-before-the-app-loads.md): what the bind needs (the serve
 * command, serve-http.ts, the home probe, the pidfile) reaches none of it either.
 *
 * Behind it, the modules every surface loads before its first answer (the session manager, the
 * ACP and RPC engines, the HTTP app) reach none of the libraries that load on first use
 * (docs/decisions/0380-start-up-without-yaml-and-tools.md): the YAML parser, the glob, ignore and
 * diff libraries, the ACP SDK's server and the WebSocket library, the transcript renderers.
 */
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'

const HEAVY = [
  /node_modules\/zod\//,
  /node_modules\/yaml\//,
  /node_modules\/vscode-/,
  /node_modules\/ai\//,
  /node_modules\/srvx\//,
  /generated\/.*\.gen\.ts$/,
  /server\/core\/manager\.ts$/,
  /server\/store\//,
  /server\/tools\//,
  /server\/acp\/(v1|seed)-dialect\.ts$/,
]
const ALLOWED = [/generated\/acp\/v1-constants\.gen\.ts$/]

const ON_FIRST_USE = [
  /node_modules\/yaml\//,
  /node_modules\/picomatch\//,
  /node_modules\/ignore\//,
  /node_modules\/diff\//,
  /node_modules\/ws\//,
  /node_modules\/@agentclientprotocol\/sdk\//,
  /server\/share\//,
]

/**
 * Every module statically reachable from `entry`, each with the chain that reaches it; the
 * built-ins they import as ES modules under `node:<name>`, each with the chain of its importer.
 */
async function staticClosure(entry: string): Promise<Map<string, string[]>> {
  const r = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    splitting: true,
    outdir: 'out',
    metafile: true,
    logLevel: 'silent',
  })
  const inputs = r.metafile.inputs
  const chains = new Map<string, string[]>([[entry, [entry]]])
  const queue = [entry]
  while (queue.length) {
    const m = queue.shift()!
    for (const i of inputs[m]?.imports ?? []) {
      if (i.kind !== 'import-statement' || chains.has(i.path)) continue
      if (i.external) {
        if (i.path.startsWith('node:')) chains.set(i.path, [...chains.get(m)!, i.path])
        continue
      }
      chains.set(i.path, [...chains.get(m)!, i.path])
      queue.push(i.path)
    }
  }
  return chains
}

describe('the ACP start-up path', () => {
  it.each(['server/cli/ferret.ts', 'server/cli/otter.ts'])('%s statically reaches nothing heavy', async (entry) => {
    const chains = await staticClosure(entry)
    expect(chains.has('server/acp/serve-acp.ts')).toBe(true)
    const heavy = [...chains]
      .filter(([p]) => HEAVY.some((h) => h.test(p)) && !ALLOWED.some((a) => a.test(p)))
      .map(([, chain]) => chain.join(' → '))
    expect(heavy).toEqual([])
  })
})

describe('the HTTP server binds before the app loads', () => {
  // The store's light corners the bind needs: CHIMERA_HOME, the pidfile (and its lock file), the home's write probe.
  const BIND = [/generated\/event-facts\.gen\.ts$/, /server\/store\/(paths|pidfile|lock-file|home-probe)\.ts$/]
  it.each(['server/cli/otter.ts', 'server/cli/serve-http.ts', 'server/store/home-probe.ts', 'server/http/listen.ts'])(
    '%s statically reaches nothing heavy',
    async (entry) => {
      const chains = await staticClosure(entry)
      const heavy = [...chains]
        .filter(([p]) => HEAVY.some((h) => h.test(p)) && ![...ALLOWED, ...BIND].some((a) => a.test(p)))
        .map(([, chain]) => chain.join(' → '))
      expect(heavy).toEqual([])
      expect([...chains.keys()].some((p) => /server\/http\/(server-app|app|node-handler)\.ts$/.test(p))).toBe(false)
      // node:http is taken by process.getBuiltinModule (an ES import builds its namespace, and on
      // Node 22+ its WebSocket getter loads undici), node:crypto on first use, which the bind never
      // makes (server/platform/builtins.ts; docs/decisions/0480-the-bind-path-without-node-namespaces.md).
      expect(chains.get('node:http')?.join(' → ')).toBeUndefined()
      expect(chains.get('node:crypto')?.join(' → ')).toBeUndefined()
    },
  )
})

describe('the first answer of each surface', () => {
  it.each([
    'server/core/manager.ts',
    'server/acp/v1-dialect.ts',
    'server/rpc/run-rpc.ts',
    'server/http/server-app.ts',
    'server/cli/agent-process.ts',
  ])('%s statically reaches none of the libraries loaded on first use', async (entry) => {
    const chains = await staticClosure(entry)
    const early = [...chains].filter(([p]) => ON_FIRST_USE.some((h) => h.test(p))).map(([, chain]) => chain.join(' → '))
    expect(early).toEqual([])
  })
})
