/**
 * Serve the HTTP surface with listhen on host:port until the process shuts down. Usage errors
 * (exit 2, before binding): a TLS flag alone, an unreadable certificate or key, a non-loopback
 * bind without a token. The Node server gets header, request and keep-alive timeouts and a cap
 * on concurrent connections, so slow or half-open clients cannot pile up descriptors.
 */
import { readFileSync } from 'node:fs'
import type { Server } from 'node:http'
import type { SessionManager } from '../core/manager.ts'
import { isLoopbackName } from '../http/guard.ts'
import { guardSlowClients } from '../http/slow-clients.ts'
import type { Logger } from '../log.ts'
import { UsageError } from './args.ts'

export interface ServeHttpOptions {
  agent: 'otter' | 'ferret'
  host: string
  port: number
  token?: string
  tlsCert?: string
  tlsKey?: string
  insecure?: boolean
  /** Browser origins allowed by CORS (`--cors`, repeatable). */
  cors?: string[]
  version: string
  logger: Logger
  manager?: SessionManager
  /** Shutdown: close the listener and open connections. */
  signal?: AbortSignal
}

/** Slow clients: headers must arrive within 10 s, a whole request within 30 s (SSE responses are not limited). */
export const HEADERS_TIMEOUT_MS = 10_000
export const REQUEST_TIMEOUT_MS = 30_000
export const KEEP_ALIVE_TIMEOUT_MS = 5_000
export const MAX_CONNECTIONS = 1024

/** True for a loopback bind address or name (`--host`; parsed IP literals, not prefixes). */
export const isLoopback = (host: string): boolean => isLoopbackName((host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase())

function readPem(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw new UsageError(`${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
}

export function checkServeOptions(o: Pick<ServeHttpOptions, 'host' | 'token' | 'tlsCert' | 'tlsKey' | 'insecure'>): { cert: string; key: string } | undefined {
  if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new UsageError('--tls-cert and --tls-key must be given together')
  if (!isLoopback(o.host) && !o.token && !o.insecure) {
    throw new UsageError(`refusing to bind ${o.host} without a bearer token: set --auth-token (or OTTER_SERVER_TOKEN / FERRET_SERVER_TOKEN), or pass --insecure`)
  }
  if (!o.tlsCert || !o.tlsKey) return undefined
  return { cert: readPem(o.tlsCert, '--tls-cert'), key: readPem(o.tlsKey, '--tls-key') }
}

export async function serveHttp(o: ServeHttpOptions): Promise<void> {
  const https = checkServeOptions(o)
  const [{ listen }, { nodeHandler }, { createHttpServerApp }] = await Promise.all([import('listhen'), import('../http/node-handler.ts'), import('../http/server-app.ts')])
  // The Host check (DNS-rebinding guard) applies to loopback binds; other binds need a token.
  const guard = { cors: o.cors ?? [], allowedHosts: isLoopback(o.host) ? [] : undefined }
  const app = createHttpServerApp({ version: o.version, startedAt: new Date(), logger: o.logger, masterToken: o.token, guard })
  let listener: Awaited<ReturnType<typeof listen>>
  try {
    listener = await listen(nodeHandler(app), {
      hostname: o.host,
      port: o.port === 0 ? { random: true } : { port: o.port, portRange: [o.port, o.port] },
      showURL: false,
      isProd: true,
      qr: false,
      public: false,
      tunnel: false,
      https: https ?? false,
      // The process's shutdown closes the server gracefully; listhen's own would exit at once.
      autoClose: false,
    } as never)
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code === 'EADDRINUSE') throw new Error(`port ${o.port} on ${o.host} is already in use`)
    if (e.code === 'EADDRNOTAVAIL') throw new Error(`cannot bind ${o.host}: the address is not available on this machine`)
    throw err
  }
  const server = (listener as unknown as { server: Server }).server
  server.headersTimeout = HEADERS_TIMEOUT_MS
  server.requestTimeout = REQUEST_TIMEOUT_MS
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  server.maxConnections = MAX_CONNECTIONS
  guardSlowClients(server, { headersMs: HEADERS_TIMEOUT_MS, bodyMs: REQUEST_TIMEOUT_MS })
  o.logger.info(`chimera ${o.agent} serve: listening on ${listener.url.replace(/\/$/, '')}${o.token ? ' (bearer auth on)' : ''}`)
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      // Open streams (SSE) would hold close() forever: cut idle and open connections after a grace period.
      server.closeIdleConnections()
      setTimeout(() => server.closeAllConnections(), 3000).unref()
      void listener.close().finally(() => {
        o.logger.info('HTTP server stopped')
        resolve()
      })
    }
    if (o.signal?.aborted) stop()
    else o.signal?.addEventListener('abort', stop, { once: true })
  })
}
