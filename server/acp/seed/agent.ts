/**
 * The seed dialect's sessions on one connection (docs/zed.md otter, docs/zed.md ferret): each
 * session this client opened has an event pump writing the agent's `session/update` shape
 * (otter-map.ts or ferret-map.ts) with `eventId`; `session/message` (and 001's alias
 * `session/turn`) replies with the final assistant message once its updates are written; a
 * second message while one runs queues behind it (the core's queue). Permissions go out as
 * `permission_request` updates and come back through `permission/respond`.
 *
 * `eventId` numbers the session's notifications on this wire: 1 for the first one it ever
 * emitted, no gaps (acp-seed.openrpc.yaml "Event ids and replay"). It is derived from the log
 * (the Nth event this dialect shows is `eventId` N), so a replay, a `session/load` and a restarted
 * server give every notification the same number.
 *
 * `session/resume {sinceEventId}` replays the retained updates after the cursor: the most
 * recent `OTTER_ACP_DEFAULT_HISTORY_SIZE` (default 1024) updates of the session; `truncated`
 * tells the client its cursor is older than the oldest one retained. Cursor: omitted, 0,
 * negative or non-integer → everything retained; at or past the latest → nothing.
 */
import type { SessionManager } from '../../core/manager.ts'
import type { Session } from '../../core/session.ts'
import { workingDirProblem } from '../../core/working-dir.ts'
import { isApprovalPolicy, type PermissionDecision } from '../../core/permissions.ts'
import type { AnyEvent } from '../../events/event-types.ts'
import type { Connection } from '../../../client/wire/jsonrpc/connection.ts'
import type { HandlersFor, Inbound, ParamsOf, ResultOf } from '../../jsonrpc/dispatcher.ts'
import type { acpSeedMethods } from '../../../generated/acp/seed.gen.ts'
import { RpcError } from '../../../client/wire/jsonrpc/errors.ts'
import type { Logger } from '../../log.ts'
import type { BridgeStatus } from '../../../generated/schemas.gen.ts'
import { bridgeStatus, type AgentName } from '../dialect.ts'
import { EventPump, endAttachments } from '../event-pump.ts'
import { historySize, normaliseCursor, replayWindow } from '../history.ts'
import { toFerretParams } from './ferret-map.ts'
import { toOtterParams } from './otter-map.ts'

export interface SeedAgentOptions {
  agent: AgentName
  conn: Connection
  manager: SessionManager
  logger: Logger
  historySize?: number
  /** The process's cloud bridge (docs/bridge.md); absent: none configured. */
  bridge?: () => BridgeStatus
  /** A network connection: its end leaves the sessions as they are (DialectContext.detach). */
  detach?: boolean
}

interface Attachment {
  session: Session
  pump: EventPump
}

type SeedTable = typeof acpSeedMethods
/** Every inbound seed method but `initialize` (the dialect's): a handler of its generated type each. */
export type SeedHandlers = HandlersFor<SeedTable, Exclude<Inbound<SeedTable>, 'initialize'>>

/** A session's notifications on one wire, numbered from the log (oldest first). */
type Numbered = { eventId: number; params: object }

export class SeedAgent {
  readonly #o: SeedAgentOptions
  readonly #sessions = new Map<string, Attachment>()

  constructor(o: SeedAgentOptions) {
    this.#o = o
  }

  /** The `session/update` params of one event on this agent's wire, numbered `eventId`. */
  params(e: AnyEvent, eventId: number): object | undefined {
    return this.#o.agent === 'ferret' ? toFerretParams(e, eventId) : toOtterParams(e, eventId)
  }

  /** Every notification of a logged history, numbered 1, 2, … as the live stream numbered them. */
  #number(events: readonly AnyEvent[]): Numbered[] {
    const out: Numbered[] = []
    for (const e of events) {
      const params = this.params(e, out.length + 1)
      if (params) out.push({ eventId: out.length + 1, params })
    }
    return out
  }

  handlers(): SeedHandlers {
    const message: SeedHandlers['session/message'] = (p) => this.#message(p)
    return {
      'session/new': async (p) => {
        const problem = p.cwd ? workingDirProblem(p.cwd) : undefined
        if (problem !== undefined) throw RpcError.invalidParams([{ path: 'cwd', message: problem }])
        const s = await this.#o.manager.create(p.cwd ? { cwd: p.cwd } : {})
        await this.#attachAtEnd(s)
        return { sessionId: s.id }
      },
      'session/load': async (p) => {
        const s = await this.#get(p.sessionId)
        if (!this.#sessions.has(s.id)) await this.#attachAtEnd(s)
        return { sessionId: s.id }
      },
      // The one listing (store/listing.ts) of this agent's sessions, every row.
      'session/list': async () => ({
        sessions: (await this.#o.manager.listSessions({ agents: [this.#o.manager.opts.agent] })).sessions,
      }),
      'session/message': message,
      'session/turn': message,
      'session/get': async (p) => {
        const id = (await this.#get(p.sessionId)).id
        const r = await this.#o.manager.router.read(id, false)
        return { sessionId: id, status: r.status, summary: r.summary }
      },
      'session/cancel': async (p) => {
        const s = await this.#get(p.sessionId)
        await this.#o.manager.router.cancel(s.id)
        return { ok: true }
      },
      // Where the session runs, like prompts (another instance's, or a fresh copy here).
      'session/setMode': async (p) => {
        await this.#o.manager.router.setMode((await this.#get(p.sessionId)).id, p.mode)
        return { ok: true }
      },
      'session/setModel': async (p) => {
        await this.#o.manager.router.setModel((await this.#get(p.sessionId)).id, p.model)
        return { ok: true }
      },
      'session/resume': (p) => this.#resume(p.sessionId, p.sinceEventId),
      'permission/respond': (p) => this.#respond(p),
      'session/setSandbox': async (p) => {
        const s = await this.#get(p.sessionId)
        if (p.sandbox === undefined || p.sandbox === s.sandbox) return { mode: s.sandbox }
        return {
          mode: s.sandbox,
          restartRequired: true,
          message: `restart required: the sandbox is fixed at launch (--sandbox ${p.sandbox})`,
        }
      },
      'session/setApproval': async (p) => {
        const s = await this.#get(p.sessionId)
        if (!isApprovalPolicy(p.approval))
          throw RpcError.invalidParams([{ path: 'approval', message: `unknown approval preset "${p.approval}"` }])
        await this.#o.manager.router.setApproval(s.id, p.approval)
        return { ok: true }
      },
      'session/bridgeStatus': async (p) => {
        if (p.sessionId) await this.#get(p.sessionId)
        return bridgeStatus(this.#o.bridge)
      },
    }
  }

  async end(): Promise<void> {
    await endAttachments(this.#sessions.values(), {
      detach: this.#o.detach,
      current: (s) => this.#o.manager.peek(s.id) ?? s,
    })
    this.#sessions.clear()
  }

  async #get(id: string): Promise<Session> {
    return this.#o.manager.get(id)
  }

  /** Attach after the logged history: live notifications continue its numbering. */
  async #attachAtEnd(session: Session): Promise<Attachment> {
    const events = await session.events(0)
    // Another request (a message racing a load) may have attached it while the log was read.
    return this.#sessions.get(session.id) ?? this.#attach(session, events.at(-1)?.seq ?? 0, this.#number(events).length)
  }

  /** Write the session's events after `afterSeq`, the first notification numbered `shown + 1`. */
  #attach(session: Session, afterSeq: number, shown: number): Attachment {
    const old = this.#sessions.get(session.id)
    if (old) void old.pump.stop()
    let eventId = shown
    const pump = new EventPump(
      session,
      afterSeq,
      async (e) => {
        const params = this.params(e, eventId + 1)
        if (!params) return
        eventId++
        await this.#o.conn.notify('session/update', params)
      },
      this.#o.logger,
    )
    const att = { session, pump }
    this.#sessions.set(session.id, att)
    return att
  }

  async #attached(id: string): Promise<Attachment> {
    const s = await this.#get(id)
    return this.#sessions.get(s.id) ?? (await this.#attachAtEnd(s))
  }

  async #message(p: ParamsOf<SeedTable['session/message']>): Promise<ResultOf<SeedTable['session/message']>> {
    const a = await this.#attached(p.sessionId)
    const text = typeof p.prompt === 'string' ? p.prompt : p.prompt.map((b) => b.text).join('\n')
    // Run where the session runs: here, or forwarded to the instance that holds it (its events
    // reach this connection's pump from the shared store all the same).
    const { outcome, lastSeq } = await this.#o.manager.router.prompt(a.session.id, text).done
    await a.pump.delivered(lastSeq)
    const chunk =
      this.#o.agent === 'ferret'
        ? outcome.output
        : ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: outcome.output } } as const)
    if (outcome.stop_reason === 'cancelled') return { stopReason: 'cancelled', cancelled: true, message: chunk }
    if (outcome.stop_reason === 'error') return { stopReason: 'error', message: chunk }
    return { stopReason: outcome.stop_reason === 'max_steps' ? 'max_steps' : 'end_turn', message: chunk }
  }

  async #resume(id: string, since: unknown) {
    const s = await this.#get(id)
    const old = this.#sessions.get(s.id)
    if (old) await old.pump.stop()
    this.#sessions.delete(s.id)
    const cursor = normaliseCursor(since)
    const events = await s.events(0)
    const updates = this.#number(events)
    const w = replayWindow(updates, cursor, this.#o.historySize ?? historySize())
    for (const u of w.replay) await this.#o.conn.notify('session/update', u.params)
    this.#attach(s, events.at(-1)?.seq ?? 0, updates.length)
    return { sessionId: s.id, replayed: w.replay.length, lastEventId: w.lastEventId, truncated: w.truncated }
  }

  async #respond(p: {
    requestId?: string
    reply?: PermissionDecision
    sessionId?: string
    id?: string
    decision?: PermissionDecision
  }) {
    const rid = p.requestId ?? p.id!
    const decision = (p.reply ?? p.decision)!
    if (p.sessionId) {
      // Answered where the session runs (here, or the instance that holds it).
      const s = await this.#get(p.sessionId)
      if (await this.#o.manager.router.replyPermission(s.id, rid, decision, 'acp')) return { ok: true }
    } else {
      const candidates = [...this.#sessions.values()].map((a) => a.session).concat(this.#o.manager.live())
      for (const s of candidates) if (s.replyPermission(rid, decision, 'acp')) return { ok: true }
      // Sessions this client has open that another instance runs: the request may be theirs.
      const router = this.#o.manager.router
      for (const id of this.#sessions.keys())
        if (!router.runsHere(id) && (await router.replyPermission(id, rid, decision, 'acp'))) return { ok: true }
    }
    throw RpcError.invalidParams([
      { path: p.requestId !== undefined ? 'requestId' : 'id', message: `no pending permission request "${rid}"` },
    ])
  }
}
