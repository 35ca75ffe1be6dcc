/**
 * Where the arms find a Chimera to talk to: the in-process h3 app, the same app on a loopback
 * socket (server/http/listen.ts, as `chimera otter serve` serves it), or the bundled CLI for stdio. Both
 * HTTP targets run the real server app over a real SessionManager (offline model) on a
 * temporary CHIMERA_HOME and workspace, removed on close.
 * Third-party implementations plug in here with a base URL or a command.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { customCommands } from '../../server/commands/custom-commands.ts'
import { SessionManager, type ManagerOptions } from '../../server/core/manager.ts'
import { snapshotHistory, snapshotRoot } from '../../server/store/snapshots.ts'
import { buildModelRegistry } from '../../server/providers/registry.ts'
import { nodeHandler } from '../../server/http/node-handler.ts'
import { listen } from '../../server/http/listen.ts'
import { createHttpServerApp, type HttpServerApp } from '../../server/http/server-app.ts'
import type { SseSettings } from '../../server/http/sse/sse-stream.ts'
import type { ApprovalPolicy } from '../../server/core/permissions.ts'
import { noopLogger, type Logger } from '../../server/log.ts'
import { VERSION } from '../../server/version.ts'
import type { HttpTarget } from './arms/http.ts'
import type { StdioTarget } from './arms/stdio.ts'

export interface ServerOptions {
  token?: string
  cors?: string[]
  /** Idle-session TTL in ms (default: none). */
  ttlMs?: number
  /** Approval policy of new sessions (default allow). */
  approval?: ApprovalPolicy
  /** Files of the server's working directory (path → content). */
  workspace?: Record<string, string>
  sse?: Partial<SseSettings>
  logger?: Logger
  /** Custom commands per working directory (default: the CLI's, user scope in the temp base). */
  commands?: ManagerOptions['commands']
}

/** An HTTP target plus the server behind it (tests reach into the manager and the workspace). */
export interface ServerTarget extends HttpTarget {
  server: HttpServerApp
  cwd: string
  home: string
}

function build(opts: ServerOptions): {
  server: HttpServerApp
  cwd: string
  home: string
  dispose: () => Promise<void>
} {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-http-')))
  const cwd = join(base, 'ws')
  const home = join(base, 'home')
  mkdirSync(cwd)
  mkdirSync(home)
  for (const [rel, content] of Object.entries(opts.workspace ?? {})) {
    const p = join(cwd, rel)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p, content)
  }
  // The CLI's registry with no provider configured: the offline model, the others listed as unconfigured.
  const models = buildModelRegistry({}, { logger: opts.logger })
  // As the CLI builds it (agent-process.ts): snapshot undo history and custom commands, the
  // user scope inside the temporary base so a developer's own commands never leak in.
  const manager = new SessionManager({
    agent: 'otter',
    cwd,
    home,
    models,
    approval: opts.approval ?? 'allow',
    logger: opts.logger,
    history: snapshotHistory({ home, env: {}, logger: opts.logger ?? noopLogger }),
    commands: opts.commands ?? customCommands({ userDir: join(base, 'user-commands') }),
    protectedPaths: [snapshotRoot(home, {})],
  })
  const server = createHttpServerApp({
    version: VERSION,
    startedAt: new Date(),
    logger: opts.logger ?? noopLogger,
    manager,
    masterToken: opts.token,
    guard: { cors: opts.cors ?? [], allowedHosts: [] },
    sessionTtlMs: opts.ttlMs,
    sse: opts.sse,
    env: { CHIMERA_HOME: home },
  })
  const dispose = async (): Promise<void> => {
    server.close()
    await manager.shutdown(5000)
    rmSync(base, { recursive: true, force: true })
  }
  return { server, cwd, home, dispose }
}

export function inProcessTarget(opts: ServerOptions = {}): ServerTarget {
  const b = build(opts)
  return {
    baseUrl: 'http://127.0.0.1',
    fetch: async (req) => b.server.app.fetch(req),
    close: b.dispose,
    server: b.server,
    cwd: b.cwd,
    home: b.home,
  }
}

export async function socketTarget(
  opts: ServerOptions = {},
  tls?: { cert: string; key: string },
): Promise<ServerTarget> {
  const b = build(opts)
  const listener = await listen(nodeHandler(b.server.app), { host: '127.0.0.1', port: 0, https: tls })
  const baseUrl = listener.url
  const close = async (): Promise<void> => {
    b.server.close()
    listener.server.closeAllConnections()
    await listener.close()
    await b.dispose()
  }
  return { baseUrl, fetch: (req) => fetch(req), close, server: b.server, cwd: b.cwd, home: b.home }
}

/** The bundled CLI; `vitest` global set-up builds it before any test runs. */
export const CLI_BUNDLE = fileURLToPath(new URL('../../dist/chimera.mjs', import.meta.url))

export function cliTarget(env: Record<string, string> = {}): StdioTarget {
  if (!existsSync(CLI_BUNDLE)) throw new Error(`${CLI_BUNDLE} is missing: run \`make build\``)
  return { command: [process.execPath, CLI_BUNDLE], env }
}
