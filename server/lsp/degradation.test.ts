/**
 * The LSP tools degrade with the document's exact errors and never throw: no provider or a
 * provider with no manager (`LSP not configured`, and the provider is only consulted when an LSP
 * tool runs), an extension no server handles (`no language server for <ext>`), a server that is
 * not installed or cannot start and a real server killed mid-request (`LSP server failed: …`,
 * restarted on the next call, nothing left running), a server that never answers
 * (`LSP request timed out`). Also argument handling: the three path forms, confinement, anchors.
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runTool } from '../tools/registry.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from '../tools/fixtures/workspace.ts'
import { lspTools } from '../tools/lsp.ts'
import type { ToolContext } from '../tools/types.ts'
import { LspManager } from './manager.ts'
import { COLD_MS, processesIn } from './fixtures/project.ts'
import { LspServers, BUILTIN_SERVERS, type LspServerSpec } from './servers.ts'
import { within } from '../core/fixtures/harness.ts'

const SILENT = fileURLToPath(new URL('./fixtures/silent-server.mjs', import.meta.url))

let ws: TempWorkspace
beforeAll(() => {
  ws = tempWorkspace()
  ws.write({
    'tsconfig.json': '{"compilerOptions":{"strict":true},"include":["*.ts"]}',
    'a.ts': 'export const alpha = 1\n',
    'b.ts': "import { alpha } from './a'\nexport const beta = alpha + 1\n",
    'notes.xyz': 'hello\n',
    Makefile: 'all:\n',
    'x.silent': 'anything\n',
    'x.missing': 'anything\n',
    'x.enoent': 'anything\n',
  })
})
afterAll(() => ws.cleanup())

const tools = (provider?: () => LspManager | undefined) => new Map(lspTools(provider).map((t) => [t.name, t]))
const run = (name: string, args: unknown, ctx: ToolContext, provider?: () => LspManager | undefined) =>
  runTool(name, args, ctx, { tools: tools(provider) })

const fake = (id: string, ext: string, resolve: LspServerSpec['resolve']): LspServerSpec => ({
  id,
  extensions: [ext],
  rootMarkers: [],
  languageId: () => id,
  resolve,
})

describe('LSP not configured', () => {
  it('every tool says so when the context has no provider, or the provider gives no manager', async () => {
    const ctx = recordingContext(ws.cwd)
    const args = { path: 'a.ts', position: { line: 0, character: 13 }, new_name: 'x' }
    const calls: string[] = []
    for (const name of ['lsp_diagnostics', 'lsp_completion', 'lsp_rename', 'lsp_definition', 'lsp_references']) {
      const a =
        name === 'lsp_diagnostics'
          ? { path: 'a.ts' }
          : name === 'lsp_rename'
            ? args
            : { path: args.path, position: args.position }
      expect(await run(name, a, ctx)).toEqual({ ok: false, error: 'LSP not configured' })
      expect(await run(name, a, ctx, () => (calls.push(name), undefined))).toEqual({
        ok: false,
        error: 'LSP not configured',
      })
    }
    expect(calls).toHaveLength(5)
    // A provider that throws is a tool error too, not an exception.
    expect(
      await run('lsp_diagnostics', { path: 'a.ts' }, ctx, () => {
        throw new Error('boom')
      }),
    ).toEqual({ ok: false, error: 'LSP not configured (boom)' })
  })
})

describe('argument handling', () => {
  const noStart = () => new LspManager({ cwd: ws.cwd, servers: new LspServers([]) })

  it('confines paths like every file tool: outside the workspace is a sandbox violation', async () => {
    const ctx = recordingContext(ws.cwd)
    writeFileSync(join(ws.outside, 'o.ts'), 'export {}\n')
    const r = await run('lsp_diagnostics', { path: join(ws.outside, 'o.ts') }, ctx, noStart)
    expect(r).toMatchObject({ ok: false, error: expect.stringContaining('outside the workspace') })
    expect(ctx.violations).toEqual([
      { tool: 'lsp_diagnostics', path: join(ws.outside, 'o.ts'), mode: 'workspace-write' },
    ])
    expect(await run('lsp_diagnostics', { path: '../outside/o.ts' }, ctx, noStart)).toMatchObject({
      ok: false,
      error: expect.stringContaining('outside the workspace'),
    })
  })

  it('takes relative, absolute and file:// paths to the same file, and anchors by occurrence', async () => {
    const ctx = recordingContext(ws.cwd)
    for (const path of ['b.ts', join(ws.cwd, 'b.ts'), `file://${join(ws.cwd, 'b.ts')}`]) {
      // No server registered: the path resolved (no confinement or read error), then discovery failed.
      expect(await run('lsp_definition', { path, position: { text: 'alpha', occurrence: 2 } }, ctx, noStart)).toEqual({
        ok: false,
        error: 'no language server for .ts',
      })
    }
    expect(
      await run('lsp_definition', { path: 'b.ts', position: { text: 'alpha', occurrence: 3 } }, ctx, noStart),
    ).toEqual({ ok: false, error: '"alpha" occurs 2 times in b.ts, not 3' })
    expect(await run('lsp_definition', { path: 'b.ts', position: { text: 'gamma' } }, ctx, noStart)).toEqual({
      ok: false,
      error: '"gamma" does not occur in b.ts',
    })
    expect(await run('lsp_definition', { path: 'b.ts', position: { line: 9, character: 0 } }, ctx, noStart)).toEqual({
      ok: false,
      error: 'line 9 is past the end of b.ts (3 lines, zero-based)',
    })
    expect(await run('lsp_definition', { path: 'b.ts', position: { line: 0 } }, ctx, noStart)).toMatchObject({
      ok: false,
      error: expect.stringContaining('invalid arguments for lsp_definition'),
    })
    expect(await run('lsp_rename', { path: 'b.ts', position: { line: 0, character: 0 } }, ctx, noStart)).toMatchObject({
      ok: false,
      error: expect.stringContaining('new_name'),
    })
  })

  it('each tool has its own permission key (the resolved path); lsp_rename asks by default', async () => {
    const { toolSpecs } = await import('../../generated/tools/tools.gen.ts')
    for (const t of lspTools()) {
      expect(t.permissionKey({ path: 'src/x.ts' }, { cwd: '/w' })).toBe('/w/src/x.ts')
      expect(toolSpecs[t.name as keyof typeof toolSpecs].permission).toBe(t.name === 'lsp_rename' ? 'ask' : 'allow')
    }
  })
})

describe('degradation with the exact errors', () => {
  const servers = new LspServers([
    ...BUILTIN_SERVERS,
    fake('silent', '.silent', () => ({ command: process.execPath, args: [SILENT] })),
    fake('missing', '.missing', () => ({ missing: 'fake-ls is not installed (not found on PATH)' })),
    fake('enoent', '.enoent', () => ({ command: join(ws.cwd, 'no-such-binary'), args: [] })),
  ])
  let killNext: string | undefined
  let manager: LspManager
  let quick: LspManager
  beforeAll(() => {
    quick = new LspManager({ cwd: ws.cwd, servers, requestTimeoutMs: 1000 })
    manager = new LspManager({
      cwd: ws.cwd,
      servers,
      onRequest: (method, pid) => {
        if (method === killNext) {
          killNext = undefined
          process.kill(pid, 'SIGKILL')
        }
      },
    })
  })
  afterAll(async () => {
    await Promise.all([manager.shutdown(), quick.shutdown()])
    expect(processesIn(ws.cwd)).toEqual([])
  })
  const ctx = () => recordingContext(ws.cwd)
  const def = (path: string, position: unknown = { line: 0, character: 0 }) =>
    run('lsp_definition', { path, position }, ctx(), () => manager)

  it('no language server for <ext>', async () => {
    expect(await def('notes.xyz')).toEqual({ ok: false, error: 'no language server for .xyz' })
    expect(await def('Makefile')).toEqual({ ok: false, error: 'no language server for Makefile' })
  })

  it('LSP server failed: a server that is not installed, or cannot be started', async () => {
    expect(await def('x.missing')).toEqual({
      ok: false,
      error: 'LSP server failed: fake-ls is not installed (not found on PATH)',
    })
    expect(await def('x.enoent')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^LSP server failed: enoent could not start: spawn .*no-such-binary ENOENT/),
    })
  })

  it('LSP request timed out: a server that never answers', async () => {
    const r = await run('lsp_definition', { path: 'x.silent', position: { line: 0, character: 0 } }, ctx(), () => quick)
    expect(r).toEqual({ ok: false, error: 'LSP request timed out' })
    expect(quick.servers().find((s) => s.id === 'silent')?.dead).toBeUndefined()
  })

  it(
    'LSP server failed: a real server killed mid-request; the next call restarts it, the old one leaves nothing behind',
    async () => {
      const pos = { text: 'alpha', occurrence: 2 }
      const others = processesIn(ws.cwd)
      const once = await within(def('b.ts', pos), COLD_MS, 'first definition')
      expect(once).toMatchObject({
        ok: true,
        data: { definitions: [expect.objectContaining({ uri: expect.stringMatching(/\/[ab]\.ts$/) })] },
      })
      const first = manager.servers().find((s) => s.id === 'typescript')
      const before = processesIn(ws.cwd).filter((p) => !others.includes(p))
      expect(before).toContain(first?.pid)
      killNext = 'textDocument/definition'
      expect(await def('b.ts', pos)).toEqual({
        ok: false,
        error: 'LSP server failed: typescript exited (killed by SIGKILL)',
      })
      // The killed server's group (tsserver) went with it.
      const alive = (pid: number) => processesIn(ws.cwd).includes(pid)
      const until = Date.now() + 5000
      while (before.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
      expect(before.filter(alive)).toEqual([])

      const again = await within(def('b.ts', pos), COLD_MS, 'definition after the restart')
      expect(again).toEqual(once)
      const second = manager.servers().find((s) => s.id === 'typescript')
      expect(second?.pid).not.toBe(first?.pid)
      expect(second?.dead).toBeUndefined()
    },
    2 * COLD_MS,
  )
})
