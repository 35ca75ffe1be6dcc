/**
 * The composition root of the HTTP surface: the session manager it is given (one per process,
 * shared with ACP in a ferret process), per-session tokens, the registry of open streams, idle
 * eviction, and every route group's handlers, assembled into the h3 app.
 */
import type { BridgeStatus } from '../../generated/schemas.gen.ts'
import type { H3 } from 'h3'
import type { SessionManager } from '../core/manager.ts'
import type { AgentName } from '../acp/dialect.ts'
import type { Logger } from '../log.ts'
import { ACP_PATH, AcpEndpoint, acpLimits, type AcpLimits } from './acp-endpoint.ts'
import { createHttpApp, type OperationHandlers } from './app.ts'
import type { HttpDeps } from './deps.ts'
import type { GuardOptions } from './guard.ts'
import { CommandRouter } from './forward.ts'
import { IdleEviction } from './idle-eviction.ts'
import { approveHandlers } from './routes/approve.ts'
import { commandsHandlers } from './routes/commands.ts'
import { eventsHandlers } from './routes/events.ts'
import { healthHandlers } from './routes/health.ts'
import { infoHandlers } from './routes/info.ts'
import { openapiHandlers } from './routes/openapi.ts'
import { runsHandlers } from './routes/runs.ts'
import { sessionHandlers } from './routes/session.ts'
import { sessionsHandlers } from './routes/sessions.ts'
import { transcriptHandlers } from './routes/transcript.ts'
import { renameHandlers } from './routes/rename.ts'
import { undoHandlers } from './routes/undo.ts'
import { SessionTokens, SharedSessionTokens } from './session-tokens.ts'
import type { LiveSessions } from '../store/types.ts'
import { StreamRegistry, type StreamLimits } from './sse/registry.ts'
import { DEFAULT_SSE_SETTINGS, type SseSettings } from './sse/sse-stream.ts'

export interface HttpServerOptions {
  version: string
  startedAt: Date
  logger: Logger
  manager: SessionManager
  masterToken?: string
  guard?: GuardOptions
  /** Idle sessions are evicted after this long; 0 or undefined: never. */
  sessionTtlMs?: number
  sse?: Partial<SseSettings>
  /** Open-stream limits (sse/registry.ts); defaults DEFAULT_STREAM_LIMITS. */
  streamLimits?: Partial<StreamLimits>
  env?: NodeJS.ProcessEnv
  /** Which agent `/acp` serves (its dialects and extensions); default otter. */
  agent?: AgentName
  /** `/acp` limits (acp-endpoint.ts); default: the `CHIMERA_ACP_*` variables, else DEFAULT_ACP_LIMITS. */
  acpLimits?: Partial<AcpLimits>
  /**
   * Several instances over one store: the live sessions and their tokens, shared through it
   * (given the idle TTL); absent, they are this server's memory.
   */
  liveSessions?: (ttlMs: number) => LiveSessions
  /** ferret's cloud bridge (docs/bridge.md), for `bridgeStatus` asked over `/acp`. */
  bridge?: () => BridgeStatus
}

export interface HttpServerApp {
  app: H3
  deps: HttpDeps
  /** `/acp` (ACP over Streamable HTTP; `attach` it to the Node server for WebSocket). */
  acp: AcpEndpoint
  /** End every open stream with `end` and stop the eviction timer (shutdown). */
  close(): void
}

export function createHttpServerApp(o: HttpServerOptions): HttpServerApp {
  const live = o.liveSessions?.(o.sessionTtlMs ?? 0)
  const deps: HttpDeps = {
    version: o.version,
    startedAt: o.startedAt,
    logger: o.logger,
    manager: o.manager,
    tokens: live ? new SharedSessionTokens(live) : new SessionTokens(),
    ...(live ? { live } : {}),
    ...(o.masterToken !== undefined ? { masterToken: o.masterToken } : {}),
    streams: new StreamRegistry(o.streamLimits),
    sse: { ...DEFAULT_SSE_SETTINGS, ...o.sse },
    // With several instances, a session with an open event stream is in use: streaming keeps it
    // in memory (another instance may run its turns; one server ends the streams it evicts).
    eviction: new IdleEviction(
      o.manager,
      o.sessionTtlMs,
      o.logger,
      live,
      (id) => o.manager.shared && deps.streams.count(id) > 0,
    ),
    env: o.env ?? process.env,
  }
  // A session leaving the manager (deleted, evicted) takes its token and its streams with it.
  // With a shared store only a delete does (everywhere): evicted here, it may be live elsewhere.
  const unsubscribe = o.manager.onEvict((s, reason) => {
    const tokens = deps.tokens
    if (tokens instanceof SessionTokens) tokens.revoke(s.id)
    else if (reason === 'deleted')
      void live?.forget(s.id).catch((err: unknown) => o.logger.warn(`session ${s.id}: its token was not dropped`, err))
    deps.streams.end(s.id)
  })
  // A session deleted on another instance ends its streams here too.
  const stopForgotten = live?.onForgotten((id) => deps.streams.end(id))
  deps.eviction.start()
  const handlers: OperationHandlers = {
    ...healthHandlers(deps),
    ...openapiHandlers(),
    ...infoHandlers(deps),
    ...sessionsHandlers(deps),
    ...sessionHandlers(deps),
    ...eventsHandlers(deps),
    ...undoHandlers(deps),
    ...renameHandlers(deps),
    ...approveHandlers(deps),
    ...transcriptHandlers(deps),
    ...commandsHandlers(deps),
    ...runsHandlers(deps),
  } satisfies OperationHandlers
  const guard = o.guard ?? { cors: [], allowedHosts: [] }
  const acp = new AcpEndpoint({
    agent: o.agent ?? 'otter',
    version: o.version,
    logger: o.logger,
    manager: o.manager,
    masterToken: o.masterToken,
    tokens: deps.tokens,
    guard,
    limits: { ...acpLimits(deps.env), ...o.acpLimits },
    ...(o.bridge ? { bridge: o.bridge } : {}),
  })
  // Several instances over one store: session commands go to the session's owner (forward.ts).
  const router = o.manager.shared ? new CommandRouter({ router: o.manager.router, logger: o.logger }) : undefined
  const app = createHttpApp({
    ...(router ? { dispatch: router.dispatch.bind(router) } : {}),
    logger: o.logger,
    masterToken: o.masterToken,
    tokens: deps.tokens,
    guard,
    handlers,
    onRequest: () => deps.eviction.sweep(),
    extraRoutes: { [ACP_PATH]: (req) => acp.handle(req) },
  })
  router?.attach(app)
  return {
    app,
    deps,
    acp,
    close: () => {
      void acp.close()
      deps.eviction.stop()
      unsubscribe()
      stopForgotten?.()
      deps.streams.endAll()
    },
  }
}
