/**
 * What `chimera otter serve` and `chimera ferret serve` share: the HTTP flags, the session
 * flags, and one session manager for every transport the process serves. `otter serve` runs
 * HTTP, or ACP on stdio with `--acp` (docs/http.md: `--acp` swaps the transport). `ferret serve`
 * runs ACP on stdio, and with `--http` HTTP beside it over the same sessions (docs/zed.md). The
 * process runs until its input closes: when stdin is a pipe, socket or terminal (an editor, a
 * shell), its end shuts `ferret serve --http` down too, so an editor that dies leaves no server
 * holding the port; when stdin is /dev/null or a file (a service), HTTP is served until a signal
 * (docs/decisions/0241-ferret-http-lifetime.md).
 */
import { existsSync, fstatSync } from 'node:fs'
import type { Logger } from '../log.ts'
import type { ApprovalPolicy } from '../core/approval-policies.ts'
import type { AgentName } from '../acp/dialect.ts'
import type { BridgeStatus } from '../../generated/schemas.gen.ts'
// Light (the framing and the initialize answers; docs/decisions/0140): static saves a load round.
import { serveAcp } from '../acp/serve-acp.ts'
import type { ModelRegistry } from '../core/model-registry.ts'
import type { RedisEventStore } from '../store/redis-store.ts'
import { configPath } from '../core/project-config.ts'
import { buildModelRegistry } from '../providers/registry.ts'
import { VERSION } from '../version.ts'
import { startupMark } from '../startup-trace.ts'
import type { AgentProcess } from './agent-process.ts'
import type { SessionDefaults } from './session-flags.ts'
import type { ServeHttpOptions, ServedSessions } from './serve-http.ts'
import { UsageError, parsePort, repeatable } from './args.ts'
import { DEFAULT_SESSION_TTL_S } from '../http/idle-eviction.ts'
import { sessionArgs, sessionCwd, type SessionFlagValues } from './session-args.ts'

export const HTTP_ARGS = {
  port: { type: 'string', description: 'HTTP port (0: any free port)', default: '5173' },
  host: { type: 'string', description: 'HTTP bind address', default: '127.0.0.1' },
  cors: { type: 'string', description: 'Browser origin to allow (repeatable)' },
  'auth-token': {
    type: 'string',
    description: 'Master bearer token (default: $OTTER_SERVER_TOKEN / $FERRET_SERVER_TOKEN)',
  },
  'tls-cert': { type: 'string', description: 'TLS certificate (PEM); needs --tls-key' },
  'tls-key': { type: 'string', description: 'TLS private key (PEM); needs --tls-cert' },
  insecure: { type: 'boolean', description: 'Allow a non-loopback bind without a token', default: false },
  'session-ttl': {
    type: 'string',
    description: 'Evict sessions idle this many seconds (0 or none: never)',
    default: '3600',
  },
} as const

/** `ferret serve`'s cloud bridge (docs/bridge.md): dial out to a relay; nothing listens here. */
export const BRIDGE_ARGS = {
  bridge: {
    type: 'string',
    description: 'Dial out to this cloud-bridge relay, ws:// or wss://…/bridge (default: $FERRET_BRIDGE_URL)',
  },
  'bridge-token': { type: 'string', description: "The relay's bridge token (default: $FERRET_BRIDGE_TOKEN)" },
} as const

/** `--bridge` / `--bridge-token` (or their variables) checked: the relay's URL and token, or undefined. */
export function bridgeConfig(
  args: { bridge?: string; 'bridge-token'?: string },
  env: NodeJS.ProcessEnv = process.env,
): { url: URL; token: string } | undefined {
  const raw = args.bridge ?? env.FERRET_BRIDGE_URL
  if (raw === undefined || raw === '') return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`--bridge must be a ws:// or wss:// URL, got ${JSON.stringify(raw)}`)
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new UsageError(`--bridge must be a ws:// or wss:// URL (the relay's /bridge), got ${url.protocol}//…`)
  const token = args['bridge-token'] ?? env.FERRET_BRIDGE_TOKEN
  if (token === undefined || token.trim() === '')
    throw new UsageError("--bridge needs the relay's bridge token: set $FERRET_BRIDGE_TOKEN (or --bridge-token)")
  return { url, token }
}

export const serveSessionArgs = (approval: ApprovalPolicy, why: string) =>
  ({
    ...sessionArgs(approval, why),
    store: {
      type: 'string',
      description:
        'Where sessions live: file (the default, under CHIMERA_HOME) or redis://host:port/db (default: $CHIMERA_STORE)',
    },
  }) as const

const TOKEN_ENV: Record<AgentName, string> = { otter: 'OTTER_SERVER_TOKEN', ferret: 'FERRET_SERVER_TOKEN' }

export interface ServeArgs extends SessionFlagValues {
  port: string
  host: string
  'auth-token'?: string
  'tls-cert'?: string
  'tls-key'?: string
  insecure: boolean
  'session-ttl'?: string
  store?: string
  bridge?: string
  'bridge-token'?: string
}

/** The master token from `--auth-token` or the agent's variable; an empty one is a usage error. */
export function masterToken(
  agent: AgentName,
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (flag !== undefined) {
    if (flag.trim() === '')
      throw new UsageError('--auth-token is empty: give a token, or leave the flag out to run without auth')
    return flag
  }
  const v = env[TOKEN_ENV[agent]]
  if (v === undefined) return undefined
  if (v.trim() === '')
    throw new UsageError(`${TOKEN_ENV[agent]} is set but empty: set a token, or unset it to run without auth`)
  return v
}

/** `--session-ttl`: seconds (fractions allowed), `0` or `none` to disable; milliseconds out. */
export function parseSessionTtl(v: string | undefined): number {
  if (v === undefined) return DEFAULT_SESSION_TTL_S * 1000
  if (v === 'none' || v === '0') return 0
  const n = Number(v)
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 365 * 86_400)
    throw new UsageError(`--session-ttl must be seconds (0 or none: never), got ${JSON.stringify(v)}`)
  return n * 1000
}

/**
 * True when stdin is something a live peer writes to (a pipe, a socket, a terminal): its end
 * means the editor or shell that started us is gone. /dev/null or a file ends at once and means
 * nothing about who is still there.
 */
function liveInput(): boolean {
  // node:tty loads here, at the end of input, not on the start-up path.
  if (process.getBuiltinModule('node:tty').isatty(0)) return true
  try {
    const st = fstatSync(0)
    return st.isFIFO() || st.isSocket()
  } catch {
    return false
  }
}

/**
 * True when the server may answer before the session manager exists (the ACP-only server its
 * `initialize`, docs/decisions/0140-lazy-acp-start-up.md; the HTTP-only server a liveness probe,
 * docs/decisions/0445-listen-before-the-app-loads.md): the file store, no bridge, and no flag
 * whose check needs the agent's modules (`--agent`, `--allowed-tools`, `--permission`, a project
 * config to read). The other flags are checked up front all the same.
 */
function startsLazily(
  transports: { acp: boolean; http: boolean },
  args: ServeArgs,
  rawArgs: readonly string[],
): boolean {
  if (transports.acp === transports.http) return false
  if (args.store !== undefined || process.env.CHIMERA_STORE) return false
  if (bridgeConfig(args)) return false
  if (args.agent !== undefined || args['allowed-tools'] !== undefined || repeatable(rawArgs, '--permission').length > 0)
    return false
  return !existsSync(configPath(sessionCwd(args)))
}

/** `--model`, checked before anything loads (a lazy start's other flags need no agent modules). */
function lazyModels(args: ServeArgs, logger: Logger): ModelRegistry {
  const models = buildModelRegistry(process.env, { model: args.model, logger })
  if (args.model !== undefined) {
    try {
      models.check(args.model)
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
  }
  return models
}

/** `--store` / `CHIMERA_STORE`: a Redis URL, or undefined for the file store (a bad value is a usage error). */
async function storeUrlArg(flag: string | undefined): Promise<string | undefined> {
  if (flag === undefined && !process.env.CHIMERA_STORE) return undefined
  const { storeUrl } = await import('../store/redis-store.ts')
  try {
    return storeUrl(flag)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

/**
 * Build the process's session manager from the checked session flags and say how it is confined.
 * With a Redis URL the sessions and the always/never decisions live in that Redis (an unreachable
 * one is one line and exit 1); otherwise in the file store under CHIMERA_HOME.
 */
async function startAgent(
  agent: AgentName,
  defaults: SessionDefaults,
  models: ModelRegistry,
  logger: Logger,
  storeUrl?: string,
  forwardTimeoutMs?: number,
  homeChecked = false,
): Promise<AgentProcess & { redis?: RedisEventStore }> {
  const [{ chimeraHome }, { eventLogProblem, startAgentProcess }] = await Promise.all([
    import('../store/paths.ts'),
    import('./agent-process.ts'),
  ])
  startupMark('modules')
  let redis: RedisEventStore | undefined
  if (storeUrl !== undefined) {
    const [{ RedisEventStore, shownUrl }, { randomUUID }] = await Promise.all([
      import('../store/redis-store.ts'),
      import('node:crypto'),
    ])
    // Each instance leases the sessions it runs (docs/scale-out.md).
    redis = new RedisEventStore({ url: storeUrl, logger, instanceId: randomUUID(), ...leaseTimes() })
    await redis.connect()
    logger.info(`sessions live in the Redis store at ${shownUrl(storeUrl)}`)
  }
  // The write probe's file system calls run while the manager is set up (an HTTP server checked
  // its home already, and refuses to start when it cannot write there).
  const probing = redis || homeChecked ? undefined : eventLogProblem(chimeraHome())
  const proc = await startAgentProcess(
    agent,
    {
      ...defaults,
      models,
      ...(redis
        ? {
            store: redis,
            auditStore: redis.auditStore(),
            leases: redis.leases,
            // Commands for a session another instance runs go there (HTTP and ACP alike).
            forward: (handle: (payload: unknown) => Promise<unknown>) => redis.bus(handle),
            ...(forwardTimeoutMs !== undefined ? { forwardTimeoutMs } : {}),
          }
        : {}),
    },
    logger,
  )
  if (redis) proc.onShutdown(() => redis.close())
  const problem = await probing
  if (problem) logger.warn(`${problem}: sessions cannot be saved until this is fixed`)
  startupMark('store')
  proc.announce()
  return Object.assign(proc, redis ? { redis } : {})
}

/**
 * `CHIMERA_LEASE_TTL_MS`: the session lease's time-to-live (default 5000; renewed at 3/10 of it), the
 * bound on how long a dead owner's sessions wait before another instance takes them over.
 */
function leaseTimes(env: NodeJS.ProcessEnv = process.env): { leaseTtlMs?: number; leaseRenewMs?: number } {
  const v = env.CHIMERA_LEASE_TTL_MS
  if (v === undefined || v === '') return {}
  const ms = Number(v)
  if (!Number.isInteger(ms) || ms < 500 || ms > 600_000)
    throw new UsageError(`CHIMERA_LEASE_TTL_MS must be milliseconds between 500 and 600000, got ${JSON.stringify(v)}`)
  return { leaseTtlMs: ms, leaseRenewMs: Math.floor(ms * 0.3) }
}

/** `CHIMERA_FORWARD_TIMEOUT_MS`: how long a command forwarded to the instance that runs its session waits for its answer (default 30000). */
function forwardTimeout(env: NodeJS.ProcessEnv = process.env): { timeoutMs?: number } {
  const v = env.CHIMERA_FORWARD_TIMEOUT_MS
  if (v === undefined || v === '') return {}
  const ms = Number(v)
  if (!Number.isInteger(ms) || ms < 100 || ms > 600_000)
    throw new UsageError(
      `CHIMERA_FORWARD_TIMEOUT_MS must be milliseconds between 100 and 600000, got ${JSON.stringify(v)}`,
    )
  return { timeoutMs: ms }
}

/** The HTTP flags given on a command line that serves no HTTP: silently ignoring them would mislead. */
export function refuseHttpFlags(agent: AgentName, rawArgs: readonly string[]): void {
  const given = Object.keys(HTTP_ARGS).filter((name) =>
    rawArgs.some((a) => a === `--${name}` || a.startsWith(`--${name}=`) || a === `--no-${name}`),
  )
  if (!given.length) return
  const how = agent === 'otter' ? 'drop --acp to serve HTTP' : 'add --http to serve HTTP beside ACP'
  throw new UsageError(
    `${given.map((n) => `--${n}`).join(', ')} only ${given.length > 1 ? 'apply' : 'applies'} to HTTP, and this command serves ACP on stdio only: ${how}, or leave ${given.length > 1 ? 'them' : 'it'} out`,
  )
}

/** Serve until stopped: ACP on stdio, HTTP, or both over one session manager. */
export async function runServe(
  agent: AgentName,
  transports: { acp: boolean; http: boolean },
  args: ServeArgs,
  rawArgs: readonly string[],
  logger: Logger,
): Promise<void> {
  if (!transports.http) refuseHttpFlags(agent, rawArgs)
  const lazy = startsLazily(transports, args, rawArgs)
  if (lazy && transports.acp) return serveAcpLazily(agent, args, rawArgs, logger)
  if (lazy) {
    const models = lazyModels(args, logger)
    return serveHttpFirst(agent, args, rawArgs, models, await httpOptions(agent, args, rawArgs, logger), logger)
  }
  const { readAgentFlag, sessionFlags, sessionModel } = await import('./session-flags.ts')
  const agentDef = await readAgentFlag(args)
  const models = buildModelRegistry(process.env, { model: sessionModel(args, agentDef), logger })
  const defaults = sessionFlags(args, rawArgs, models, agentDef)
  const storeUrl = await storeUrlArg(args.store)
  const forwardWait = storeUrl !== undefined ? forwardTimeout() : {}
  const bridge = agent === 'ferret' ? bridgeConfig(args) : undefined
  const http = transports.http ? await httpOptions(agent, args, rawArgs, logger) : undefined
  const proc = await startAgent(agent, defaults, models, logger, storeUrl, forwardWait.timeoutMs, http !== undefined)
  const running: Promise<unknown>[] = []
  let bridgeStatus: (() => BridgeStatus) | undefined
  if (bridge) {
    const { BridgeLink } = await import('../bridge/link.ts')
    const link = new BridgeLink({
      ...bridge,
      logger,
      acp: {
        agent,
        version: VERSION,
        logger,
        manager: proc.manager,
        signal: proc.signal,
        bridge: (): BridgeStatus => link.status(),
      },
    })
    bridgeStatus = () => link.status()
    proc.onShutdown(() => link.close())
    link.start()
  }
  if (http) {
    const { serveHttp } = await import('./serve-http.ts')
    running.push(
      serveHttp({
        ...http,
        sessions: {
          manager: proc.manager,
          ...(proc.redis ? { liveSessions: (ttlMs: number) => proc.redis!.liveSessions(ttlMs) } : {}),
          ...(bridgeStatus ? { bridge: bridgeStatus } : {}),
        },
        signal: proc.signal,
      }),
    )
  }
  if (transports.acp) {
    running.push(
      serveAcp({
        agent,
        version: VERSION,
        input: process.stdin,
        output: process.stdout,
        logger,
        manager: proc.manager,
        signal: proc.signal,
        bridge: bridgeStatus,
      }).then(() => {
        if (!http || liveInput()) return proc.shutdown('input ended')
        logger.info('ACP input is not a pipe, socket or terminal (nobody can write to it); serving HTTP until a signal')
      }),
    )
  }
  await Promise.all([proc.done, ...running])
}

/**
 * The termination signals that arrive while a lazy start has no agent process yet (the process's
 * own handlers take over once it exists: `end()` then). The first is kept as the reason
 * (`received SIGTERM`) and `onFirst` runs once; later ones change nothing.
 */
function earlySignals(onFirst: () => void = () => {}): { readonly reason: string | undefined; end(): void } {
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const
  let reason: string | undefined
  const on = (sig: NodeJS.Signals): void => {
    if (reason !== undefined) return
    reason = `received ${sig}`
    onFirst()
  }
  for (const sig of signals) process.on(sig, on)
  return {
    get reason() {
      return reason
    },
    end() {
      for (const sig of signals) process.off(sig, on)
    },
  }
}

/**
 * ACP on stdio with the session manager built when the first dialect opens, right after a
 * plain `initialize` was answered. A termination signal before then ends the connection like
 * the end of input (exit 0); after it, the agent process's own handlers take over.
 */
async function serveAcpLazily(
  agent: AgentName,
  args: ServeArgs,
  rawArgs: readonly string[],
  logger: Logger,
): Promise<void> {
  const models = lazyModels(args, logger)
  const stop = new AbortController()
  let started: Promise<AgentProcess> | undefined
  // A signal before the agent process exists ends the connection like the end of input.
  const early = earlySignals(() => stop.abort())
  const start = (): Promise<AgentProcess> =>
    (started ??= import('./session-flags.ts')
      .then(({ sessionFlags }) => startAgent(agent, sessionFlags(args, rawArgs, models), models, logger))
      .then((p) => {
        early.end()
        p.signal.addEventListener('abort', () => stop.abort(), { once: true })
        return p
      }))
  await serveAcp({
    agent,
    version: VERSION,
    input: process.stdin,
    output: process.stdout,
    logger,
    manager: async () => (await start()).manager,
    signal: stop.signal,
  })
  early.end()
  const reason = early.reason ?? 'input ended'
  if (!started) {
    logger.info(`${reason}: shutting down`)
    return
  }
  const p = await started
  await p.shutdown(reason)
  await p.done
}

/**
 * The HTTP flags checked (usage errors before anything binds) and the home probed: an HTTP server
 * records itself under CHIMERA_HOME (run/, the pidfile) before it binds, so a home it cannot
 * write is one line and exit 1, as for `code`, not a warning and then a failure.
 */
async function httpOptions(
  agent: AgentName,
  args: ServeArgs,
  rawArgs: readonly string[],
  logger: Logger,
): Promise<Omit<ServeHttpOptions, 'sessions'>> {
  const flags = {
    host: args.host,
    port: parsePort(args.port, 5173),
    token: masterToken(agent, args['auth-token']),
    tlsCert: args['tls-cert'],
    tlsKey: args['tls-key'],
    insecure: args.insecure,
    cors: repeatable(rawArgs, '--cors'),
    sessionTtlMs: parseSessionTtl(args['session-ttl']),
    home: (await import('../store/paths.ts')).chimeraHome(),
  }
  const [{ checkServeOptions }, { eventLogProblem }] = await Promise.all([
    import('./serve-http.ts'),
    import('../store/home-probe.ts'),
  ])
  // The certificate and key are read here, once: serveHttp serves what this returns.
  const https = checkServeOptions(flags)
  const problem = await eventLogProblem(flags.home)
  if (problem) throw new Error(`${problem}; the HTTP server cannot record itself there`)
  const { tlsCert: _cert, tlsKey: _key, insecure: _insecure, ...http } = flags
  return { agent, ...http, ...(https ? { https } : {}), version: VERSION, logger }
}

/**
 * HTTP only, bound before the session manager exists (docs/decisions/0445): the port is taken and
 * a liveness probe answered while the agent core loads; every other request waits for it. A
 * termination signal before the core is up ends the server once the core has loaded, without
 * serving: what waited is answered 503 and runs nothing. After that the agent process's own
 * handlers take over.
 */
async function serveHttpFirst(
  agent: AgentName,
  args: ServeArgs,
  rawArgs: readonly string[],
  models: ModelRegistry,
  http: Omit<ServeHttpOptions, 'sessions'>,
  logger: Logger,
): Promise<void> {
  // The start gate's steps come through serve-http.ts: a dynamic import of start-gate.ts would be
  // a file of its own on the bind path.
  const { serveHttp, ioTurn } = await import('./serve-http.ts')
  const stop = new AbortController()
  let proc: AgentProcess | undefined
  // A signal before the agent process exists is acted on once the core has loaded.
  const early = earlySignals()
  const start = async (): Promise<ServedSessions | undefined> => {
    try {
      // The core (no built-in the bind did not load: docs/decisions/0465), after an I/O turn.
      await ioTurn()
      const { sessionFlags } = await import('./session-flags.ts')
      await ioTurn()
      proc = await startAgent(agent, sessionFlags(args, rawArgs, models), models, logger, undefined, undefined, true)
    } finally {
      early.end()
    }
    const p = proc
    if (early.reason !== undefined || p.signal.aborted) {
      // Stopped while the core loaded: the agent process ends, and nothing that waited is run.
      await p.shutdown(early.reason ?? 'stopped')
      return undefined
    }
    p.signal.addEventListener('abort', () => stop.abort(p.signal.reason), { once: true })
    return { manager: p.manager }
  }
  try {
    await serveHttp({ ...http, sessions: start, signal: stop.signal })
  } catch (err) {
    // The app could not be built once the core had started: the agent process ends with it.
    await proc?.shutdown('the HTTP server could not start')
    throw err
  }
  await proc?.done
}
