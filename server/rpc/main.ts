/**
 * `chimera code --mode rpc` wiring: one session of the agent core, its events mapped onto the
 * JSON-lines wire, commands dispatched to the handlers, until stdin closes. At end of input
 * running and queued turns finish (with `--approval ask` nobody can answer a permission
 * request any more, so pending and later ones are denied); then the process exits 0 with its
 * event log complete.
 */
import type { Readable, Writable } from 'node:stream'
import type { Logger } from '../log.ts'
import { SessionManager, type ManagerOptions } from '../core/manager.ts'
import type { Session } from '../core/session.ts'
import { toRpcMessages } from './event-map.ts'
import { createRpcHandlers } from './handlers.ts'
import { RpcServer } from './server.ts'

export interface RpcMainOptions extends Omit<ManagerOptions, 'agent' | 'logger'> {
  input: Readable
  output: Writable
  logger: Logger
  onWire?: (dir: 'in' | 'out', message: unknown) => void
}

/** Serve one session over JSON lines; resolves with the session when input has ended. */
export async function runRpc(o: RpcMainOptions): Promise<Session> {
  const manager = new SessionManager({ ...o, agent: 'otter' })
  const session = await manager.create()
  o.logger.info(`rpc session ${session.id} (model ${session.model}, cwd ${session.meta.cwd})`)
  const server = new RpcServer({ input: o.input, output: o.output, logger: o.logger, onWire: o.onWire })
  const calls = new Map<string, { tool: string; args: Record<string, unknown> }>()
  const unsubscribe = session.subscribe((e) => {
    for (const m of toRpcMessages(e, calls)) void server.emit(m)
  })
  server.setHandlers(createRpcHandlers(session))
  await server.run({
    onEnd: () => {
      // With `--approval ask` nobody can answer a permission request once input has ended.
      if (session.approval !== 'ask') return
      for (const id of session.pendingPermissions()) session.replyPermission(id, 'deny', 'end-of-input')
      void session.setApproval('deny')
    },
  })
  await session.idle()
  unsubscribe()
  return session
}
