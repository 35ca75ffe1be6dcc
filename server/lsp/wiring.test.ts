/**
 * How LSP joins a session, without starting a server: the tools are offered only when the
 * manager has an LSP factory and can be narrowed by the allowed-tools list; the factory is called
 * lazily (not at session start, not for other tools), once per working directory, and the
 * managers it made are shut down when the session closes. Discovery: the nearest root marker
 * between the file and the workspace, cached per directory; custom registration wins.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, within, ofType, type TestEnv } from '../core/fixtures/harness.ts'
import { LspManager, findRoot } from './manager.ts'
import { LspServers, registerLspServer, defaultServers, BUILTIN_SERVERS } from './servers.ts'
import type { LspFactory } from './provider.ts'
import { processesIn } from './fixtures/project.ts'
import { fileURLToPath } from 'node:url'

const SILENT = fileURLToPath(new URL('./fixtures/silent-server.mjs', import.meta.url))

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-lsp-wiring-')
})
afterEach(async () => {
  await env.cleanup()
})

const LSP = ['lsp_diagnostics', 'lsp_completion', 'lsp_rename', 'lsp_definition', 'lsp_references']

describe('LSP in a session', () => {
  it('no factory: no LSP tools; with one: all five, narrowed by allowed tools', async () => {
    const none = await env.manager().create()
    expect(
      none
        .availableTools()
        .map((t) => t.name)
        .filter((n) => n.startsWith('lsp_')),
    ).toEqual([])
    const factory: LspFactory = () => undefined
    const all = await env.manager({ lsp: factory }).create()
    expect(
      all
        .availableTools()
        .map((t) => t.name)
        .filter((n) => n.startsWith('lsp_')),
    ).toEqual(LSP)
    const some = await env
      .manager({ lsp: factory })
      .create({ allowedTools: ['Read', 'lsp_diagnostics', 'lsp_definition'] })
    expect(some.availableTools().map((t) => t.name)).toEqual(['Read', 'lsp_diagnostics', 'lsp_definition'])
    // Plan mode offers the read-only ones only (lsp_rename asks).
    const plan = await env.manager({ lsp: factory }).create({ mode: 'plan' })
    expect(
      plan
        .availableTools()
        .map((t) => t.name)
        .filter((n) => n.startsWith('lsp_')),
    ).toEqual(LSP.filter((n) => n !== 'lsp_rename'))
  })

  it('the factory is called on the first LSP tool call only, once per directory; the session close shuts its managers down', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'alpha\n')
    const made: string[] = []
    let shutdowns = 0
    const factory: LspFactory = (cwd) => {
      made.push(cwd)
      const m = new LspManager({ cwd, servers: new LspServers([]) })
      const down = m.shutdown.bind(m)
      m.shutdown = async () => {
        shutdowns++
        await down()
      }
      return m
    }
    const manager = env.manager({ lsp: factory })
    const s = await manager.create()
    await within(s.prompt('!call Read {"path":"a.txt"}').done, 10_000, 'Read')
    expect(made).toEqual([])
    const seq = s.lastSeq
    await within(
      s.prompt(
        '!call lsp_diagnostics {"path":"a.txt"}\n!call lsp_definition {"path":"a.txt","position":{"text":"alpha"}}',
      ).done,
      10_000,
      'LSP',
    )
    expect(made).toEqual([env.cwd])
    const results = ofType(await s.events(seq), 'tool_result').map((e) => e.data)
    expect(results.map((r) => [r.tool, r.ok, r.error])).toEqual([
      ['lsp_diagnostics', false, 'no language server for .txt'],
      ['lsp_definition', false, 'no language server for .txt'],
    ])
    await manager.shutdown()
    expect(shutdowns).toBe(1)
  })

  it('a factory that gives no manager: LSP not configured, as a tool error the model sees', async () => {
    writeFileSync(join(env.cwd, 'a.ts'), 'export {}\n')
    const s = await env.manager({ lsp: () => undefined }).create()
    const out = await within(s.prompt('!call lsp_diagnostics {"path":"a.ts"}').done, 10_000, 'LSP')
    expect(out.output).toBe('lsp_diagnostics error: LSP not configured')
  })
})

describe('cancel', () => {
  it("cancelling a turn stuck in an LSP request ends it at once; the server is the session's until it closes, then gone", async () => {
    writeFileSync(join(env.cwd, 'x.silent'), 'anything\n')
    const servers = new LspServers([
      {
        id: 'silent',
        extensions: ['.silent'],
        rootMarkers: [],
        languageId: () => 'silent',
        resolve: () => ({ command: process.execPath, args: [SILENT] }),
      },
    ])
    let sent!: () => void
    const requestOut = new Promise<void>((r) => (sent = r))
    const onRequest = (method: string) => void (method === 'textDocument/definition' && sent())
    const manager = env.manager({ lsp: (cwd) => new LspManager({ cwd, servers, onRequest }) })
    const s = await manager.create()
    const turn = s.prompt('!call lsp_definition {"path":"x.silent","position":{"line":0,"character":0}}')
    // The request is out (the server never answers it): cancel the turn.
    await within(requestOut, 10_000, 'the definition request')
    expect(processesIn(env.cwd)).toHaveLength(1)
    s.cancel()
    const out = await within(turn.done, 5000, 'the cancelled turn')
    expect(out.stop_reason).toBe('cancelled')
    await manager.shutdown()
    expect(processesIn(env.cwd)).toEqual([])
  })
})

describe('pull diagnostics', () => {
  it('a server that offers textDocument/diagnostic is asked, and sees the file as it is now', async () => {
    const PULL = fileURLToPath(new URL('./fixtures/pull-server.mjs', import.meta.url))
    writeFileSync(join(env.cwd, 'n.pull'), 'one\nTODO two\n')
    const servers = new LspServers([
      {
        id: 'pull',
        extensions: ['.pull'],
        rootMarkers: [],
        languageId: () => 'pull',
        resolve: () => ({ command: process.execPath, args: [PULL] }),
      },
    ])
    const m = new LspManager({ cwd: env.cwd, servers })
    try {
      const first = await m.diagnostics(join(env.cwd, 'n.pull'))
      expect(first.map((d) => [d.range.start.line, d.message])).toEqual([[1, 'a TODO is left']])
      expect(m.servers()).toEqual([expect.objectContaining({ id: 'pull', pullDiagnostics: true })])
      writeFileSync(join(env.cwd, 'n.pull'), 'TODO\nok\nTODO\n')
      expect((await m.diagnostics(join(env.cwd, 'n.pull'))).map((d) => d.range.start.line)).toEqual([0, 2])
    } finally {
      await m.shutdown()
    }
    expect(processesIn(env.cwd)).toEqual([])
  })
})

describe('discovery', () => {
  it('finds the nearest root marker up to the workspace, else the workspace; cached per directory', () => {
    mkdirSync(join(env.cwd, 'pkg/src/deep'), { recursive: true })
    writeFileSync(join(env.cwd, 'pkg/package.json'), '{}')
    expect(findRoot(join(env.cwd, 'pkg/src/deep'), env.cwd, ['package.json'])).toBe(join(env.cwd, 'pkg'))
    expect(findRoot(join(env.cwd, 'pkg/src/deep'), env.cwd, ['go.mod'])).toBe(env.cwd)
    const m = new LspManager({ cwd: env.cwd })
    const file = join(env.cwd, 'pkg/src/deep/x.ts')
    expect(m.discover(file)).toMatchObject({ spec: { id: 'typescript' }, root: join(env.cwd, 'pkg') })
    // Cached: removing the marker does not change the answer for that directory.
    rmSync(join(env.cwd, 'pkg/package.json'))
    expect(m.discover(file).root).toBe(join(env.cwd, 'pkg'))
    expect(new LspManager({ cwd: env.cwd }).discover(file).root).toBe(env.cwd)
    expect(m.discover(join(env.cwd, 'main.py')).spec.id).toBe('pyright')
    expect(m.discover(join(env.cwd, 'main.go')).spec.id).toBe('gopls')
    expect(m.discover(join(env.cwd, 'lib.rs')).spec.id).toBe('rust-analyzer')
    expect(m.discover(join(env.cwd, 'app.rb')).spec.id).toBe('ruby')
  })

  it('rust-analyzer is started with build scripts, proc macros and check-on-save off (no project code runs outside the sandbox)', () => {
    const bin = join(env.cwd, 'bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'rust-analyzer'), '#!/bin/sh\n', { mode: 0o755 })
    const saved = process.env.PATH
    process.env.PATH = bin
    try {
      const cmd = BUILTIN_SERVERS.find((s) => s.id === 'rust-analyzer')!.resolve()
      expect(cmd).toMatchObject({
        command: join(bin, 'rust-analyzer'),
        initializationOptions: {
          cargo: { buildScripts: { enable: false } },
          procMacro: { enable: false },
          checkOnSave: false,
        },
      })
    } finally {
      process.env.PATH = saved
    }
  })

  it('custom registration: a new extension, and a replacement that wins for its extensions', () => {
    const servers = new LspServers(BUILTIN_SERVERS)
    servers.register({
      id: 'zig',
      extensions: ['.zig'],
      rootMarkers: ['build.zig'],
      languageId: () => 'zig',
      resolve: () => ({ missing: 'zls is not installed' }),
    })
    servers.register({
      id: 'deno',
      extensions: ['.ts'],
      rootMarkers: ['deno.json'],
      languageId: () => 'typescript',
      resolve: () => ({ missing: 'deno is not installed' }),
    })
    expect(servers.forExtension('.zig')?.id).toBe('zig')
    expect(servers.forExtension('.TS')?.id).toBe('deno')
    expect(servers.forExtension('.py')?.id).toBe('pyright')
    expect(() =>
      servers.register({
        id: '',
        extensions: [],
        rootMarkers: [],
        languageId: () => '',
        resolve: () => ({ missing: '' }),
      }),
    ).toThrow('needs an id')
    // The process-wide hook feeds the default registry.
    registerLspServer({
      id: 'test-only-ext',
      extensions: ['.chimeratest'],
      rootMarkers: [],
      languageId: () => 'x',
      resolve: () => ({ missing: 'x' }),
    })
    expect(defaultServers.forExtension('.chimeratest')?.id).toBe('test-only-ext')
  })

  it('the shipped servers resolve to this package’s own binaries', () => {
    for (const id of ['typescript', 'pyright']) {
      const r = BUILTIN_SERVERS.find((s) => s.id === id)!.resolve()
      expect(r).toMatchObject({
        command: process.execPath,
        args: [expect.stringMatching(/node_modules\/(typescript-language-server|pyright)\//), '--stdio'],
      })
    }
  })
})
