/**
 * The ACP agent over stdio (`chimera otter serve --acp`, `chimera ferret serve`): one
 * Connection, the dialect chosen by `initialize`, and requests before it refused.
 */
import type { Readable, Writable } from 'node:stream'
import type { SessionManager } from '../core/manager.ts'
import type { Logger } from '../log.ts'
import { Connection } from '../jsonrpc/connection.ts'
import { RpcError, maskInternal } from '../jsonrpc/errors.ts'
import { negotiate, type AgentName, type Dialect } from './dialect.ts'
import { createV1Dialect } from './v1-dialect.ts'
import { createSeedDialect } from './seed-dialect.ts'

/** ACP messages may carry embedded files; the official SDK's limit is 32 MiB per message. */
export const ACP_MAX_LINE_BYTES = 32 * 1024 * 1024

export interface AcpServerOptions {
  agent: AgentName
  version: string
  input: Readable
  output: Writable
  logger: Logger
  onWire?: (dir: 'in' | 'out', message: unknown) => void
  /** The process's session manager, shared with the other transports. */
  manager: SessionManager
  /** Shutdown: stop reading and answer what is in flight. */
  signal?: AbortSignal
}

/** Serve ACP until the input closes. */
export async function serveAcp(opts: AcpServerOptions): Promise<void> {
  const conn = new Connection({ input: opts.input, output: opts.output, maxLineBytes: ACP_MAX_LINE_BYTES, logger: opts.logger, onWire: opts.onWire })
  const stop = (): void => void opts.input.destroy()
  opts.signal?.addEventListener('abort', stop, { once: true })
  const info = { agent: opts.agent, version: opts.version }
  let dialect: Dialect | undefined
  let initializing: Promise<unknown> | undefined
  const dctx = { conn, manager: opts.manager, logger: opts.logger }
  await conn.serve({
    internalError: (err) => (dialect ?? { internalError: maskInternal }).internalError(err),
    async request(method, params, ctx) {
      if (method === 'initialize') {
        const chosen = negotiate(params) === 'acp-v1' ? createV1Dialect(info, dctx) : createSeedDialect(opts.agent, info, dctx)
        const call = chosen.dispatcher.call(method, params, { signal: ctx.signal, id: ctx.id })
        initializing = call.catch(() => undefined)
        const result = await call
        // A second initialize renegotiates: the old dialect's sessions finish and detach.
        if (dialect) void dialect.end()
        dialect = chosen
        opts.logger.info(`initialized: ${chosen.name} wire`)
        return result
      }
      // Requests pipelined behind an initialize wait for it.
      if (!dialect && initializing) await initializing
      if (!dialect) throw RpcError.invalidRequest(`ACP connection must be initialized before '${method}'`)
      return dialect.dispatcher.call(method, params, { signal: ctx.signal, id: ctx.id })
    },
    async notification(method, params) {
      if (method === '$/cancel_request') {
        const id = (params as { requestId?: unknown } | undefined)?.requestId
        if (typeof id === 'string' || typeof id === 'number') conn.cancelInflight(id)
        return
      }
      if (!dialect || !dialect.dispatcher.served.has(method)) {
        opts.logger.debug(`notification ${method} ignored`)
        return
      }
      await dialect.dispatcher.call(method, params, { signal: conn.signal })
    },
  })
  opts.signal?.removeEventListener('abort', stop)
  // Input ended: running turns finish and their events are written before the process exits.
  await dialect?.end()
  await conn.flush()
}
