/**
 * The ACP agent over stdio (`chimera otter serve --acp`, `chimera ferret serve`): one
 * Connection, the dialect chosen by `initialize`, and requests before it refused.
 *
 * Start-up is lazy (docs/decisions/0140-lazy-acp-start-up.md): a plain `initialize` is answered
 * from initialize.ts alone; the chosen dialect (its generated validators, zod, the agent) and
 * the session manager load right after that answer is written, and requests that arrive
 * meanwhile wait for them. The dialect then runs the same `initialize` through its validator,
 * so its client state is what it always was. Any other `initialize` goes the slow way.
 */
import type { Readable, Writable } from 'node:stream'
import type { SessionManager } from '../core/manager.ts'
import type { Logger } from '../log.ts'
import type { BridgeStatus } from '../../generated/schemas.gen.ts'
import { Connection } from '../../client/wire/jsonrpc/connection.ts'
import { maskInternal, RpcError } from '../../client/wire/jsonrpc/errors.ts'
import { startupMark } from '../startup-trace.ts'
import { util } from '../platform/builtins.ts'
import { negotiate, type AgentName, type Dialect, type DialectName } from './dialect.ts'
import { plainInitialize, seedInitialize, v1Extensions, v1Initialize } from './initialize.ts'

/** ACP messages may carry embedded files; the official SDK's limit is 32 MiB per message. */
export const ACP_MAX_LINE_BYTES = 32 * 1024 * 1024

export interface AcpServerOptions {
  agent: AgentName
  version: string
  input: Readable
  output: Writable
  logger: Logger
  onWire?: (dir: 'in' | 'out', message: unknown) => void
  /**
   * The process's session manager, shared with the other transports; or how to build it, called
   * once, when the first dialect opens (after a plain `initialize` was answered).
   */
  manager: SessionManager | (() => Promise<SessionManager>)
  /** Shutdown: stop reading and answer what is in flight. */
  signal?: AbortSignal
  /** The process's cloud bridge (docs/bridge.md), for `bridgeStatus`; absent: none configured. */
  bridge?: () => BridgeStatus
  /** A network connection: its end leaves its sessions as they are (DialectContext.detach). */
  detach?: boolean
}

/** When the early `initialize` answer is compared with the dialect's (a check of this code, off the start's path). */
const EARLY_ANSWER_CHECK_MS = 500

/** Serve ACP until the input closes. */
export async function serveAcp(opts: AcpServerOptions): Promise<void> {
  const conn = new Connection({
    input: opts.input,
    output: opts.output,
    maxLineBytes: ACP_MAX_LINE_BYTES,
    logger: opts.logger,
    onWire: opts.onWire,
  })
  const stop = (): void => void opts.input.destroy()
  opts.signal?.addEventListener('abort', stop, { once: true })
  const info = { agent: opts.agent, version: opts.version }
  let dialect: Dialect | undefined
  let initializing: Promise<unknown> | undefined
  let manager: Promise<SessionManager> | undefined
  const open = async (name: DialectName): Promise<Dialect> => {
    const m = await (manager ??= typeof opts.manager === 'function' ? opts.manager() : Promise.resolve(opts.manager))
    const dctx = { conn, manager: m, logger: opts.logger, detach: opts.detach, bridge: opts.bridge }
    const dialect =
      name === 'acp-v1'
        ? (await import('./v1-dialect.ts')).createV1Dialect(info, dctx)
        : (await import('./seed-dialect.ts')).createSeedDialect(opts.agent, info, dctx)
    startupMark('modules')
    return dialect
  }
  const adopt = (chosen: Dialect): void => {
    // A second initialize renegotiates: the old dialect's sessions finish and detach.
    if (dialect) void dialect.end()
    dialect = chosen
    opts.logger.info(`initialized: ${chosen.name} wire`)
  }
  /** Requests and notifications behind an initialize wait for its dialect. */
  const ready = async (): Promise<Dialect | undefined> => {
    if (!dialect && initializing) await initializing
    return dialect
  }
  await conn.serve({
    // Through the dialect's error tables (errors.ts); before one is chosen, masked.
    internalError: (err) => (dialect ?? { internalError: maskInternal }).internalError(err),
    async request(method, params, ctx) {
      if (method === 'initialize') {
        const name = negotiate(params)
        if (!dialect && !initializing && plainInitialize(name, params)) {
          const answer = name === 'acp-v1' ? v1Initialize(info, v1Extensions(opts.agent)) : seedInitialize(info)
          // After this answer is written: load the dialect, and let it see the same initialize.
          const opening = new Promise((r) => setImmediate(r))
            .then(() => open(name))
            .then(async (chosen) => {
              const again = await chosen.dispatcher.call(method, params, { signal: conn.signal, id: ctx.id })
              adopt(chosen)
              // Compared once the start is over, not before the requests waiting for the dialect.
              setTimeout(() => {
                try {
                  if (!util().isDeepStrictEqual(again, answer))
                    opts.logger.error(`initialize answered early differs from the ${chosen.name} dialect's answer`)
                } catch {
                  // A check of this code only: nothing to stop the connection for.
                }
              }, EARLY_ANSWER_CHECK_MS).unref()
            })
          initializing = opening
          opening.catch((err) => opts.logger.error('ACP dialect failed to load', err))
          return answer
        }
        // A renegotiation waits for the dialect being opened, so the two cannot swap places.
        await ready().catch(() => undefined)
        const call = open(name).then(async (chosen) => ({
          chosen,
          result: await chosen.dispatcher.call(method, params, { signal: ctx.signal, id: ctx.id }),
        }))
        initializing = call.catch(() => undefined)
        const { chosen, result } = await call
        adopt(chosen)
        return result
      }
      // Requests pipelined behind an initialize wait for it.
      const d = await ready()
      if (!d) throw RpcError.invalidRequest(`ACP connection must be initialized before '${method}'`)
      // A domain error the client should see (its mistake, an unknown session) is answered as the
      // dialect's RpcError, not logged as a failure of the agent.
      return d.dispatcher.call(method, params, { signal: ctx.signal, id: ctx.id }).catch((err: unknown) => {
        throw d.domainError(err) ?? err
      })
    },
    async notification(method, params) {
      if (method === '$/cancel_request') {
        const id = (params as { requestId?: unknown } | undefined)?.requestId
        if (typeof id === 'string' || typeof id === 'number') conn.cancelInflight(id)
        return
      }
      const d = await ready().catch(() => undefined)
      if (!d || !d.dispatcher.served.has(method)) {
        opts.logger.debug(`notification ${method} ignored`)
        return
      }
      await d.dispatcher.call(method, params, { signal: conn.signal })
    },
  })
  opts.signal?.removeEventListener('abort', stop)
  // Input ended: running turns finish and their events are written before the process exits.
  await (await ready().catch(() => undefined))?.end()
  await conn.flush()
}
