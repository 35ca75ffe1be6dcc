/**
 * `chimera code --mode rpc` wiring: one session of the agent core (new, or a persisted one
 * continued with `--session <id>`), its event stream mapped onto the JSON-lines wire, commands
 * dispatched to the handlers, until stdin closes. Events are pulled from the session's
 * gap-free stream and written one at a time, so a client that stops reading holds the stream
 * (bounded memory; the store keeps everything) instead of growing a queue.
 *
 * At end of input running and queued turns finish; with `--approval ask` (or `auto`) nobody
 * can answer a permission request any more, so pending and later ones are denied, naming the
 * approval mode. Then the process exits 0 with its event log complete.
 */
import type { Readable, Writable } from 'node:stream'
import type { Logger } from '../log.ts'
import { SessionManager, type ManagerOptions } from '../core/manager.ts'
import type { Session } from '../core/session.ts'
import { toRpcMessages } from './event-map.ts'
import { createRpcHandlers } from './handlers.ts'
import { RpcServer } from './rpc-server.ts'
import { offlineModels } from '../providers/registry.ts'

export interface RpcMainOptions extends Partial<Omit<ManagerOptions, 'logger'>> {
  input: Readable
  output: Writable
  logger: Logger
  /** The process's session manager (default: one built from the other options). */
  manager?: SessionManager
  /** Continue this persisted session instead of creating one. */
  sessionId?: string
  /** Serve this session (already created or loaded). */
  session?: Session
  onWire?: (dir: 'in' | 'out', message: unknown) => void
  /** Shutdown: stop reading input; running turns end as the manager cancels them. */
  signal?: AbortSignal
}

/** Serve one session over JSON lines; resolves with the session when input has ended. */
export async function runRpc(o: RpcMainOptions): Promise<Session> {
  const manager =
    o.manager ??
    new SessionManager({
      ...o,
      agent: o.agent ?? 'otter',
      cwd: o.cwd ?? process.cwd(),
      logger: o.logger,
      models: o.models ?? offlineModels(),
    })
  const session = o.session ?? (o.sessionId ? await manager.get(o.sessionId) : await manager.create())
  o.logger.info(`rpc session ${session.id} (model ${session.model}, cwd ${session.meta.cwd})`)
  const server = new RpcServer({
    input: o.input,
    output: o.output,
    logger: o.logger,
    onWire: o.onWire,
    signal: o.signal,
  })
  // A continued session shows only what happens from now on.
  const pump = new EventPump(session, server, o.logger)
  server.setHandlers(createRpcHandlers(session, (seq) => pump.delivered(seq)))
  await server.run({
    onEnd: () => {
      if (session.approval === 'ask' || session.approval === 'auto') {
        session.stopAsking('no client can answer permission requests: input ended', 'end-of-input')
      }
    },
  })
  await session.idle()
  await session.flush()
  await pump.delivered(session.lastSeq)
  await pump.stop()
  return session
}

/**
 * Writes the session's events to the wire in order, one at a time, and tells how far it got
 * (`delivered`, which createRpcHandlers takes so a prompt's acknowledgement follows its events).
 * Only what happens after it is made is written.
 */
export class EventPump {
  readonly #stop = new AbortController()
  readonly #done: Promise<void>
  #written: number
  #waiters: { seq: number; resolve: () => void }[] = []

  constructor(session: Session, server: RpcServer, logger: Logger) {
    this.#written = session.lastSeq
    this.#done = (async () => {
      for await (const e of session.stream({ afterSeq: session.lastSeq, signal: this.#stop.signal })) {
        for (const m of toRpcMessages(e)) await server.emit(m)
        this.#written = e.seq
        this.#waiters = this.#waiters.filter((w) => (w.seq <= e.seq ? (w.resolve(), false) : true))
      }
    })()
      .catch((err: unknown) => logger.error('rpc event stream failed', err))
      .finally(() => {
        for (const w of this.#waiters.splice(0)) w.resolve()
      })
  }

  /** Resolves once every event up to `seq` has been written (or the stream ended). */
  delivered(seq: number): Promise<void> {
    if (this.#written >= seq || this.#stop.signal.aborted) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push({ seq, resolve }))
  }

  async stop(): Promise<void> {
    this.#stop.abort()
    await this.#done
  }
}
