/**
 * Serve the HTTP surface with listhen on host:port until SIGINT/SIGTERM. Refuses a
 * non-loopback bind without a token, and TLS flags given alone (usage errors, exit 2).
 */
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
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
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])
export const isLoopback = (host: string): boolean => LOOPBACK.has(host) || (isIP(host) === 4 && host.startsWith('127.'))

export function checkServeOptions(o: Pick<ServeHttpOptions, 'host' | 'token' | 'tlsCert' | 'tlsKey' | 'insecure'>): void {
  if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new UsageError('--tls-cert and --tls-key must be given together')
  if (!isLoopback(o.host) && !o.token && !o.insecure) {
    throw new UsageError(`refusing to bind ${o.host} without a bearer token: set --auth-token (or OTTER_SERVER_TOKEN / FERRET_SERVER_TOKEN), or pass --insecure`)
  }
}

export async function serveHttp(o: ServeHttpOptions): Promise<void> {
  checkServeOptions(o)
  const https = o.tlsCert && o.tlsKey ? { cert: readFileSync(o.tlsCert, 'utf8'), key: readFileSync(o.tlsKey, 'utf8') } : undefined
  const [{ listen }, { toNodeHandler }, { createHttpServerApp }] = await Promise.all([
    import('listhen'),
    import('h3/node'),
    import('../http/server.ts'),
  ])
  // The Host check (DNS-rebinding guard) applies to loopback binds; other binds need a token.
  const guard = { cors: o.cors ?? [], allowedHosts: isLoopback(o.host) ? [] : undefined }
  const app = createHttpServerApp({ version: o.version, startedAt: new Date(), logger: o.logger, masterToken: o.token, guard })
  const listener = await listen(toNodeHandler(app), {
    hostname: o.host,
    port: o.port === 0 ? { random: true } : { port: o.port, portRange: [o.port, o.port] },
    showURL: false,
    isProd: true,
    qr: false,
    public: false,
    tunnel: false,
    https: https ?? false,
    // Our own signal handling below shuts down gracefully; listhen's would exit at once.
    autoClose: false,
  } as never)
  o.logger.info(`chimera ${o.agent} serve: listening on ${listener.url}${o.token ? ' (bearer auth on)' : ''}`)
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => {
      o.logger.info(`received ${sig}, shutting down`)
      // Open streams (SSE) would hold close() forever: cut idle and open connections after a grace period.
      const server = (listener as unknown as { server?: { closeIdleConnections?(): void; closeAllConnections?(): void } }).server
      server?.closeIdleConnections?.()
      setTimeout(() => server?.closeAllConnections?.(), 3000).unref()
      void listener.close().finally(() => {
        o.logger.info('stopped')
        resolve()
      })
    }
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => stop(sig))
  })
}
