/**
 * Serve the HTTP surface on host:port (node:http or node:https, server/http/listen.ts) until the process shuts down. Usage errors
 * (exit 2, before binding; `checkServeOptions`, run once by the serve command before it loads
 * anything): a TLS flag alone, an unreadable certificate or key, a non-loopback bind without a
 * token. A port that is taken is one line naming it (and the PID a pidfile
 * names), exit 1. The pidfile (CHIMERA_HOME/run/<agent>-<port>.pid) is taken before binding a
 * fixed port, after binding port 0, and removed on shutdown, after the turns were cancelled and
 * their events written and every SSE stream got its final `end`. The Node server gets header,
 * request-body and keep-alive timeouts (never one on a response: streams stay open) and a cap on
 * concurrent connections that idle sockets cannot fill.
 */
import type { BridgeStatus } from '../../generated/schemas.gen.ts'
import type { KeyObject, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Server } from 'node:http'
import { networkInterfaces } from 'node:os'
import type { SessionManager } from '../core/manager.ts'
import type { HttpServerApp, HttpServerOptions } from '../http/server-app.ts'
import { StartGate, ioTurn } from '../http/start-gate.ts'
export { ioTurn }
import { crypto } from '../platform/builtins.ts'
import { isLoopbackName } from '../http/host-names.ts'
import { guardSlowClients, type SlowClientLimits } from '../http/slow-clients.ts'
import type { SseSettings } from '../http/sse/sse-stream.ts'
import type { Logger } from '../log.ts'
import {
  PidfileLocked,
  acquirePidfile,
  pidfilePath,
  readPidfile,
  releasePidfile,
  tokenHash,
  type PidRecord,
} from '../store/pidfile.ts'
import { UsageError } from './args.ts'
import { startupMark } from '../startup-trace.ts'

export interface ServeHttpOptions {
  agent: 'otter' | 'ferret'
  host: string
  port: number
  token?: string
  /** HTTPS with this certificate and key, as `checkServeOptions` read and checked them (else plain HTTP). */
  https?: { cert: string; key: string }
  /** Browser origins allowed by CORS (`--cors`, repeatable). */
  cors?: string[]
  /** Idle sessions are evicted after this long (0: never). */
  sessionTtlMs?: number
  sse?: Partial<SseSettings>
  /** CHIMERA_HOME for the pidfile; undefined: no pidfile (embedders, tests). */
  home?: string
  version: string
  logger: Logger
  /**
   * The sessions served, or how to start them: called once the port is bound (the agent core
   * loads while a liveness probe is already answered: server/http/start-gate.ts); undefined when
   * the server was stopped meanwhile (it closes without serving).
   */
  sessions: ServedSessions | (() => Promise<ServedSessions | undefined>)
  /** Shutdown: close the listener and open connections. */
  signal?: AbortSignal
  /** Connection limits (defaults: the constants below; tests shorten them). */
  limits?: Partial<ServeLimits>
  /** Called with the bound URL (and the Node server) once listening. */
  onListening?(url: string, server: Server): void
}

/** What the HTTP app serves: the process's session manager, and what several instances or ferret's bridge add. */
export interface ServedSessions {
  manager: SessionManager
  /** Several instances over one store: the live sessions and their tokens, shared (server-app.ts). */
  liveSessions?: HttpServerOptions['liveSessions']
  /** ferret's cloud bridge (docs/bridge.md), for `bridgeStatus` asked over `/acp`. */
  bridge?: () => BridgeStatus
}

/**
 * Slow clients: headers must arrive within 10 s, a request body within 30 s of its headers; a
 * response (an SSE stream) is not limited. Past MAX_CONNECTIONS a new client closes the oldest
 * socket that is waiting for a request (slow-clients.ts).
 */
export const HEADERS_TIMEOUT_MS = 10_000
export const REQUEST_TIMEOUT_MS = 30_000
export const KEEP_ALIVE_TIMEOUT_MS = 5_000
export const MAX_CONNECTIONS = 1024
/** Open connections get this long to finish after the streams ended, then they are cut. */
export const CLOSE_GRACE_MS = 3000

/** The limits a server runs with: the connection cap always set (the start gate bounds what waits by it). */
export type ServeLimits = SlowClientLimits & { maxConnections: number }

/** True for a loopback bind address or name (`--host`; parsed IP literals, not prefixes). */
export const isLoopback = (host: string): boolean =>
  isLoopbackName((host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase())

/** The names a browser reaches this server by: the bound address, or each interface's for a wildcard bind. */
export function servedHosts(host: string): string[] {
  const bare = (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase()
  if (bare !== '0.0.0.0' && bare !== '::') return [bare]
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((i) => (i ? [i.address.toLowerCase()] : []))
}

function readPem(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw new UsageError(
      `${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    )
  }
}

/** OpenSSL's reason without its code (`error:0480006C:PEM routines::no start line` → `no start line`). */
const reason = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/^error:[0-9A-F]+:[^:]*:[^:]*:/i, '')

/**
 * The certificate and key, checked before binding so a mistake names its flag (a usage error):
 * each must be PEM of its kind, and the key must be the certificate's. Text before the first
 * `-----BEGIN` (openssl's "Bag Attributes") is dropped: the server takes the PEM itself.
 */
export function tlsMaterial(certPath: string, keyPath: string): { cert: string; key: string } {
  const cert = readPem(certPath, '--tls-cert')
  const key = readPem(keyPath, '--tls-key')
  let x509: X509Certificate
  try {
    x509 = new (crypto().X509Certificate)(cert)
  } catch (err) {
    throw new UsageError(`--tls-cert: ${certPath} is not a PEM certificate (${reason(err)})`)
  }
  let keyObject: KeyObject
  try {
    keyObject = crypto().createPrivateKey(key)
  } catch (err) {
    throw new UsageError(
      `--tls-key: ${keyPath} is not a usable PEM private key (${reason(err)}; an encrypted key must be decrypted first)`,
    )
  }
  if (!x509.checkPrivateKey(keyObject))
    throw new UsageError(`--tls-key: ${keyPath} is not the private key of the certificate in --tls-cert ${certPath}`)
  const pem = (s: string) => s.slice(Math.max(0, s.indexOf('-----BEGIN')))
  return { cert: pem(cert), key: pem(key) }
}

/** The flags `checkServeOptions` checks before anything binds. */
export interface ServeFlags {
  host: string
  token?: string
  tlsCert?: string
  tlsKey?: string
  insecure?: boolean
}

/**
 * Usage errors before anything binds (one TLS flag alone, a non-loopback bind without a token),
 * then the certificate and key read and checked: `ServeHttpOptions.https`.
 */
export function checkServeOptions(o: ServeFlags): { cert: string; key: string } | undefined {
  if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new UsageError('--tls-cert and --tls-key must be given together')
  if (!isLoopback(o.host) && !o.token && !o.insecure) {
    throw new UsageError(
      `refusing to bind ${o.host} without a bearer token: set --auth-token (or OTTER_SERVER_TOKEN / FERRET_SERVER_TOKEN), or pass --insecure`,
    )
  }
  if (!o.tlsCert || !o.tlsKey) return undefined
  return tlsMaterial(o.tlsCert, o.tlsKey)
}

function inUse(o: ServeHttpOptions): Error {
  const held = o.home ? readPidfile(pidfilePath(o.home, o.agent, o.port)) : undefined
  return new Error(
    `port ${o.port} on ${o.host} is already in use${held ? ` (PID ${held.pid}, per ${pidfilePath(o.home!, o.agent, o.port)})` : ''}`,
  )
}

export async function serveHttp(o: ServeHttpOptions): Promise<void> {
  const https = o.https
  // Node's http (or https) only: the app and what it serves load once the port is bound.
  const { listen } = await import('../http/listen.ts')
  startupMark('modules')
  const record = (port: number): PidRecord => ({
    pid: process.pid,
    host: o.host,
    port,
    prefix: o.agent,
    auth_token_hash: tokenHash(o.token),
    started_at: Date.now() / 1000,
    scheme: https ? 'https' : 'http',
  })
  let pidfile: { path: string; record: PidRecord } | undefined
  const takePidfile = (port: number): void => {
    if (!o.home) return
    const r = record(port)
    try {
      pidfile = { path: acquirePidfile(o.home, r), record: r }
    } catch (err) {
      if (err instanceof PidfileLocked) throw new Error(`chimera ${o.agent} serve: ${err.message}`)
      throw err
    }
  }
  if (o.port !== 0) takePidfile(o.port)
  // The Host check (DNS-rebinding guard) applies to loopback binds; other binds need a token.
  const guard = {
    cors: o.cors ?? [],
    allowedHosts: isLoopback(o.host) ? [] : undefined,
    servedHosts: servedHosts(o.host),
  }
  const limits: ServeLimits = {
    headersMs: HEADERS_TIMEOUT_MS,
    bodyMs: REQUEST_TIMEOUT_MS,
    maxConnections: MAX_CONNECTIONS,
    ...o.limits,
  }
  const startedAt = new Date()
  // Until the app is built: a liveness probe answered, everything else waiting for the app (as
  // many as the server takes connections).
  const gate = new StartGate({ version: o.version, startedAt, rule: guard, maxWaiting: limits.maxConnections })
  let listener: Awaited<ReturnType<typeof listen>>
  try {
    listener = await listen(gate.request, { host: o.host, port: o.port, https })
  } catch (err) {
    if (pidfile) releasePidfile(pidfile.path, pidfile.record)
    const e = err as NodeJS.ErrnoException
    if (e.code === 'EADDRINUSE') throw inUse(o)
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN')
      throw new Error(`cannot bind ${o.host}: the address is not available on this machine`)
    throw err
  }
  startupMark('listen')
  const { server, port, url } = listener
  if (o.port === 0) {
    try {
      takePidfile(port)
    } catch (err) {
      await listener.close()
      throw err
    }
  }
  const release = (): void => {
    if (pidfile) releasePidfile(pidfile.path, pidfile.record)
  }
  process.once('exit', release)
  // Node's own timers as a backstop (checked every 30 s; `requestTimeout` counts only until the
  // request is received, never a streaming response); `server.timeout` stays 0: no socket is cut
  // for being quiet, an SSE stream between heartbeats included.
  server.headersTimeout = limits.headersMs
  server.requestTimeout = Math.max(limits.bodyMs, limits.headersMs)
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  server.timeout = 0
  guardSlowClients(server, limits, o.logger)
  // `/acp` over WebSocket (server/http/acp-endpoint.ts), through the gate like every request.
  server.on('upgrade', gate.upgrade)
  o.logger.info(`chimera ${o.agent} serve: listening on ${url}${o.token ? ' (bearer auth on)' : ''}`)
  o.logger.info(`web console: ${url}/ui · API reference: ${url}/docs`)
  o.onListening?.(url, server)
  let sessions: ServedSessions
  let http: HttpServerApp
  try {
    // One load at a time, with a turn of the event loop before each, so that a liveness probe is
    // answered between them (start-gate.ts `ioTurn`).
    await ioTurn()
    const served = typeof o.sessions === 'function' ? await o.sessions() : o.sessions
    if (!served) {
      // Stopped before it served (a signal while the core loaded): what waited is told so.
      gate.fail('the server is shutting down')
      await listener.close()
      release()
      o.logger.info('HTTP server stopped')
      return
    }
    sessions = served
    // node:http's namespace (the app's server adapter imports it; on Node 22+ it loads undici) is
    // a load of its own, then the app (docs/decisions/0481-the-start-in-small-steps.md).
    await ioTurn()
    await import('node:http')
    await ioTurn()
    const [{ nodeHandler }, { createHttpServerApp }] = await Promise.all([
      import('../http/node-handler.ts'),
      import('../http/server-app.ts'),
    ])
    http = createHttpServerApp({
      version: o.version,
      startedAt,
      logger: o.logger,
      manager: sessions.manager,
      masterToken: o.token,
      guard,
      sessionTtlMs: o.sessionTtlMs,
      sse: o.sse,
      agent: o.agent,
      ...(sessions.liveSessions ? { liveSessions: sessions.liveSessions } : {}),
      ...(sessions.bridge ? { bridge: sessions.bridge } : {}),
    })
    // The HTTP app's modules loaded and the app built: a phase of its own for the start-up profile.
    startupMark('modules')
    gate.open({ request: nodeHandler(http.app), upgrade: http.acp.upgrade })
  } catch (err) {
    // What waited is answered 503; the port and the pidfile are given back.
    gate.fail()
    await listener.close()
    release()
    throw err
  }
  await new Promise<void>((resolve) => {
    const stop = async (): Promise<void> => {
      // Turns are cancelled and their last events written first (bounded), so the streams carry them.
      await sessions.manager.shutdown().catch((err) => o.logger.error('session shutdown failed', err))
      http.close()
      server.closeIdleConnections()
      setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref()
      await listener.close()
      release()
      o.logger.info('HTTP server stopped')
      resolve()
    }
    if (o.signal?.aborted) void stop()
    else o.signal?.addEventListener('abort', () => void stop(), { once: true })
  })
}
