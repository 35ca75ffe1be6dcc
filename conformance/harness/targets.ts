/**
 * Where the arms find a Chimera to talk to: the in-process h3 app, the same app on a loopback
 * socket (served by listhen, as `chimera otter serve` does), or the bundled CLI for stdio.
 * Third-party implementations plug in here with a base URL or a command.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { listen } from 'listhen'
import { nodeHandler } from '../../server/http/node-handler.ts'
import { createHttpServerApp } from '../../server/http/server-app.ts'
import { noopLogger } from '../../server/log.ts'
import { VERSION } from '../../server/version.ts'
import type { HttpTarget } from './arms/http.ts'
import type { StdioTarget } from './arms/stdio.ts'

export interface ServerOptions {
  token?: string
  cors?: string[]
}

function app(opts: ServerOptions) {
  return createHttpServerApp({
    version: VERSION,
    startedAt: new Date(),
    logger: noopLogger,
    masterToken: opts.token,
    guard: { cors: opts.cors ?? [], allowedHosts: [] },
  })
}

export function inProcessTarget(opts: ServerOptions = {}): HttpTarget {
  const a = app(opts)
  return { baseUrl: 'http://127.0.0.1', fetch: async (req) => a.fetch(req), close: async () => {} }
}

export async function socketTarget(opts: ServerOptions = {}): Promise<HttpTarget> {
  const listener = await listen(nodeHandler(app(opts)), { hostname: '127.0.0.1', port: { random: true } as never, showURL: false, isProd: true, qr: false, public: false, autoClose: false })
  const baseUrl = listener.url.replace(/\/$/, '')
  return { baseUrl, fetch: (req) => fetch(req), close: () => listener.close() }
}

/** The bundled CLI; `vitest` global set-up builds it before any test runs. */
export const CLI_BUNDLE = fileURLToPath(new URL('../../dist/chimera.mjs', import.meta.url))

export function cliTarget(env: Record<string, string> = {}): StdioTarget {
  if (!existsSync(CLI_BUNDLE)) throw new Error(`${CLI_BUNDLE} is missing: run \`make build\``)
  return { command: [process.execPath, CLI_BUNDLE], env }
}
