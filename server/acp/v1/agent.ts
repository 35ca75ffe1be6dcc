/**
 * The ACP v1 agent of one connection: the sessions this client opened (new, load, resume),
 * each with an event pump mapping canonical events to `session/update`s (event-map.ts), the
 * permission requests it asked of the client, and the handlers of every v1 method we serve.
 *
 * - `session/prompt` answers with the turn's `stopReason` only after every update of the turn
 *   is on the wire; `session/cancel` cancels the turn and withdraws pending permission requests
 *   (`$/cancel_request`), so the prompt answers `cancelled`.
 * - A `permission_request` event becomes a `session/request_permission` request; its outcome
 *   answers the core (`cancelled`, or no answer because the input ended, counts as deny).
 *   Answered elsewhere (HTTP, a cancel), the client's request is withdrawn.
 * - `session/load` replays the whole log through the same rows before responding; `resume`
 *   re-attaches without replay. Updates of a session never precede its new/resume response.
 * - Extensions (specs/openrpc/acp-v1.extensions.yaml, docs/decisions/0120): `_chimera/session/
 *   replay|state|compact` and, on ferret, `_ferret/session/setSandbox|setApproval|bridgeStatus`
 *   act on a session this client has open; a replay writes its updates, in the pump's turn
 *   (never interleaved with live ones), before its response. `_ferret/session/update` goes only
 *   to a ferret client that advertised `_meta["ferret/updates"]`.
 *
 * Beside it: its types (agent-types.ts), the permission requests (permission-ask.ts), the
 * prompt turn (prompt-turn.ts), replays and map contexts (replay.ts), `session/list`
 * (session-list.ts) and the offered commands (available-commands.ts).
 */
import { workingDirProblem } from '../../core/working-dir.ts'
import type { Session } from '../../core/session.ts'
import type { Selection } from '../../../generated/instances/forward.gen.ts'
import type { AnyEvent, EventOf } from '../../events/event-types.ts'
import { RpcError } from '../../../client/wire/jsonrpc/errors.ts'
import { AUTH_METHOD_ID } from '../initialize.ts'
import { EventPump, endAttachments } from '../event-pump.ts'
import { normaliseCursor } from '../history.ts'
import { sessionNotFound } from '../../errors.ts'
import { toV1Updates, type V1Update } from './event-map.ts'
import { promptText } from './prompt-text.ts'
import { configOptions, modeState } from './session-config.ts'
import { clientTools, type ClientFs } from './client-tools.ts'
import { toFerretUpdate } from './ferret-updates.ts'
import { connectMcp, mcpMeta, mcpNotice, type SessionMcp } from './mcp-attach.ts'
import type { McpServerConfig } from '../../mcp/config.ts'
import { type Attachment, type V1AgentOptions, type V1ClientCaps, type V1Handlers } from './agent-types.ts'
import { askPermission } from './permission-ask.ts'
import { ferretHandlers } from './ferret-handlers.ts'
import { cancelTurn, promptTurn } from './prompt-turn.ts'
import { liveMap, replayMap, replaySince } from './replay.ts'
import { listSessions } from './session-list.ts'
import { availableCommands } from './available-commands.ts'

export { type V1AgentOptions, type V1ClientCaps, type V1Handlers } from './agent-types.ts'

/** `session/new` `_meta["chimera/maxSteps"]`: the session's step limit (HTTP's `max_steps`), a positive integer. */
function maxStepsMeta(meta: Record<string, unknown> | null | undefined): number | undefined {
  const v = meta?.['chimera/maxSteps']
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    throw RpcError.invalidParams([{ path: '_meta.chimera/maxSteps', message: 'must be a positive integer' }])
  }
  return v
}

export class V1Agent {
  readonly #o: V1AgentOptions
  readonly #sessions = new Map<string, Attachment>()
  /** What the client offered in `initialize`. */
  #clientFs: ClientFs | undefined
  #clientTerminal = false
  #ferretUpdates = false
  #terminalOutput = false
  readonly #unEvict: () => void

  constructor(o: V1AgentOptions) {
    this.#o = o
    // An evicted session's MCP servers stop with it.
    this.#unEvict = o.manager.onEvict((s) => {
      const a = this.#sessions.get(s.id)
      if (a?.mcp) void this.#dropMcp(a)
    })
  }

  /** Sessions this connection has open. */
  get attached(): Session[] {
    return [...this.#sessions.values()].map((a) => a.session)
  }

  /** Remember the client's capabilities (from `initialize`). */
  setClient(caps: V1ClientCaps | undefined): void {
    this.#clientFs = caps?.fs
    this.#clientTerminal = caps?.terminal === true
    this.#ferretUpdates = this.#o.agent === 'ferret' && caps?._meta?.['ferret/updates'] === true
    this.#terminalOutput = caps?._meta?.['terminal_output'] === true
  }

  /** The `_`-prefixed extension methods this agent serves (advertised in `initialize`). */
  extensions(): string[] {
    return Object.keys(this.handlers()).filter((m) => m.startsWith('_') && m !== '_session/steering')
  }

  handlers(): V1Handlers {
    return {
      // One method is offered (keys from the environment); naming another is a client error.
      authenticate: (p) => {
        if (p.methodId !== AUTH_METHOD_ID)
          throw RpcError.invalidParams([
            { path: 'methodId', message: `unknown authentication method "${p.methodId}" (offered: ${AUTH_METHOD_ID})` },
          ])
        return {}
      },
      'session/new': (p) => this.#new(p),
      'session/load': (p) => this.#load(p),
      'session/resume': (p) => this.#resume(p),
      'session/list': (p) => listSessions(this.#o.manager, p),
      'session/close': (p) => this.#close(p.sessionId),
      // With several instances over one store, both run where the session runs (core/session-router.ts).
      'session/prompt': (p, ctx) =>
        promptTurn(this.#att(p.sessionId), p, ctx.signal, this.#o.manager.router, this.#o.logger, this.#o.detach),
      'session/cancel': (p) => cancelTurn(this.#o.manager.router, this.#att(p.sessionId).session.id, this.#o.logger),
      // Like prompts, these act where the session runs (another instance's, or a fresh copy here).
      'session/set_mode': async (p) => {
        await this.#o.manager.router.setMode(this.#att(p.sessionId).session.id, p.modeId)
        return {}
      },
      'session/set_config_option': (p) => this.#setConfig(p),
      'session/set_model': async (p) => {
        await this.#o.manager.router.setModel(this.#att(p.sessionId).session.id, p.modelId)
        return {}
      },
      '_session/steering': async (p) => {
        const id = this.#att(p.sessionId).session.id
        return (await this.#o.manager.router.steer(id, promptText(p.prompt)))
          ? { outcome: 'injected' }
          : { outcome: 'promptRequired', reason: 'noRunningTurn' }
      },
      '_chimera/session/replay': (p) => this.#replay(p),
      // Read where the session runs: this instance's copy is current only while it runs it.
      '_chimera/session/state': async (p) => {
        const id = this.#att(p.sessionId).session.id
        const r = await this.#o.manager.router.read(id, true)
        return {
          sessionId: id,
          model: r.model,
          mode: r.mode,
          status: r.status,
          messages: r.messages ?? [],
          lastEventId: r.lastSeq,
        }
      },
      '_chimera/session/compact': async (p) => {
        const e = await this.#o.manager.router.compact(this.#att(p.sessionId).session.id)
        return { summary: e.data.summary, messagesBefore: e.data.messages_before, messagesAfter: e.data.messages_after }
      },
      ...(this.#o.agent === 'ferret'
        ? ferretHandlers((id) => this.#att(id).session, this.#o.manager.router, this.#o.bridge)
        : {}),
    }
  }

  /** The connection ended: nobody can answer permission requests; stop the pumps once idle. */
  async end(): Promise<void> {
    this.#unEvict()
    const all = [...this.#sessions.values()]
    await endAttachments(all, {
      after: (a) => a.tools && a.session.releaseTools(a.tools),
      detach: this.#o.detach,
      current: (s) => this.#o.manager.peek(s.id) ?? s,
    })
    this.#sessions.clear()
    await Promise.all(all.map((a) => this.#dropMcp(a)))
  }

  /** Connect the MCP servers the client passed for a session (none: nothing is loaded). */
  #connectMcp(session: Session, servers: readonly McpServerConfig[] | undefined): Promise<SessionMcp | undefined> {
    return connectMcp(servers, { cwd: session.meta.cwd, logger: this.#o.logger, version: this.#o.version ?? '0.0.0' })
  }

  /** Close an attachment's MCP servers and take their tools from the session. */
  async #dropMcp(a: Attachment): Promise<void> {
    const mcp = a.mcp
    if (!mcp) return
    a.mcp = undefined
    if (this.#sessions.get(a.session.id) === a || !this.#sessions.has(a.session.id)) a.session.useExtraTools(undefined)
    await mcp.close()
  }

  #att(id: string): Attachment {
    const a = this.#sessions.get(id)
    if (!a) throw sessionNotFound(id)
    return a
  }

  async #get(id: string): Promise<Session> {
    return this.#o.manager.get(id)
  }

  #selectors(s: Session) {
    return { modes: modeState(s.mode), configOptions: configOptions(this.#o.manager.models.models(), s.model, s.mode) }
  }

  #attach(session: Session, afterSeq: number, mcp?: SessionMcp): Attachment {
    const old = this.#sessions.get(session.id)
    if (old) void old.pump.stop()
    if (old?.mcp) void this.#dropMcp(old)
    const map = liveMap(session, this.#o.manager, this.#terminalOutput)
    const att: Attachment = {
      session,
      map,
      asks: new Map(),
      own: new Set(),
      pump: undefined as unknown as EventPump,
      queue: Promise.resolve(),
      upTo: afterSeq,
    }
    att.pump = new EventPump(
      session,
      afterSeq,
      (e) =>
        this.#exclusive(att, async () => {
          await this.#deliver(att, e)
          att.upTo = e.seq
        }),
      this.#o.logger,
    )
    this.#sessions.set(session.id, att)
    // File tools go through the editor while this client has the session open. A network client's
    // only when no other client's are in place: the editor that runs the session keeps its own
    // (docs/decisions/0320).
    const tools = clientTools(this.#o.conn, session.id, this.#clientFs, this.#clientTerminal)
    if (!this.#o.detach) session.useTools(tools)
    if (!this.#o.detach || session.useToolsIfFree(tools)) att.tools = tools
    if (mcp && session.closed) {
      // Evicted (or deleted) while its servers were connecting: they end now.
      void mcp.close()
    } else if (mcp) {
      // Connecting may take a while: the idle clock starts again from here.
      session.touch()
      att.mcp = mcp
      session.useExtraTools(mcp.tools)
      mcp.onToolsChanged = (tools) => {
        if (this.#sessions.get(session.id) === att) session.useExtraTools(tools)
      }
    }
    return att
  }

  async #deliver(att: Attachment, e: AnyEvent): Promise<void> {
    if (e.type === 'user_message' && att.own.delete(e.data.message_id)) return
    for (const u of toV1Updates(e, att.map)) await this.#update(att.session.id, u)
    if (this.#ferretUpdates) {
      const extra = toFerretUpdate(e)
      if (extra) await this.#o.conn.notify('_ferret/session/update', extra)
    }
    if (e.type === 'permission_request') this.#ask(att, e)
    else if (e.type === 'permission_reply') att.asks.get(e.data.request_id)?.abort(new Error('answered'))
  }

  /** Run `fn` once every earlier write to this client for the session is done, and before later ones. */
  #exclusive<T>(att: Attachment, fn: () => Promise<T>): Promise<T> {
    const run = att.queue.then(fn)
    att.queue = run.catch(() => undefined)
    return run
  }

  /** `_chimera/session/replay` (replay.ts), in the attachment's write chain. */
  #replay(p: { sessionId: string; sinceEventId?: number }) {
    const att = this.#att(p.sessionId)
    const cursor = normaliseCursor(p.sinceEventId)
    return this.#exclusive(att, () => replaySince(att, cursor, (u) => this.#update(att.session.id, u)))
  }

  #update(sessionId: string, update: V1Update): Promise<void> {
    return this.#o.conn.notify('session/update', { sessionId, update })
  }

  #ask(att: Attachment, e: EventOf<'permission_request'>): void {
    askPermission(this.#o.conn, this.#o.logger, att, e, this.#o.manager, this.#o.detach)
  }

  async #new(p: { cwd: string; mcpServers?: McpServerConfig[]; _meta?: Record<string, unknown> | null }) {
    const problem = workingDirProblem(p.cwd)
    if (problem !== undefined) throw RpcError.invalidParams([{ path: 'cwd', message: problem }])
    const maxSteps = maxStepsMeta(p._meta)
    const session = await this.#o.manager.create({ cwd: p.cwd, ...(maxSteps !== undefined ? { maxSteps } : {}) })

    const mcp = await this.#connectMcp(session, p.mcpServers)
    this.#attach(session, session.lastSeq, mcp)
    this.#afterResponse(session, mcp)
    return { sessionId: session.id, ...this.#selectors(session), ...mcpMeta(mcp) }
  }

  async #load(p: { sessionId: string; mcpServers?: McpServerConfig[] }) {
    const session = await this.#get(p.sessionId)
    const old = this.#sessions.get(session.id)
    if (old) {
      await old.pump.stop()
      await old.queue // a replay still writing finishes first
      await this.#dropMcp(old)
    }
    this.#sessions.delete(session.id)
    // The servers start while the history is replayed.
    const connecting = this.#connectMcp(session, p.mcpServers)
    const events = await session.events(0)
    const map = replayMap(liveMap(session, this.#o.manager, this.#terminalOutput), events)
    let last = 0
    for (const e of events) {
      for (const u of toV1Updates(e, map)) await this.#update(session.id, u)
      last = e.seq
    }
    const att = this.#attach(session, last, await connecting)
    // Requests still waiting for an answer are asked again of this client.
    for (const req of await session.pendingPermissionRequests()) {
      const e = events.find(
        (x): x is EventOf<'permission_request'> =>
          x.type === 'permission_request' && x.data.request_id === req.request_id,
      )
      if (e) this.#ask(att, e)
    }
    this.#afterResponse(session, att.mcp)
    return { ...this.#selectors(session), ...mcpMeta(att.mcp) }
  }

  async #resume(p: { sessionId: string; mcpServers?: McpServerConfig[] }) {
    const session = await this.#get(p.sessionId)
    // The servers of an earlier attachment are closed before the response (the new list replaces them).
    const old = this.#sessions.get(session.id)
    const [mcp] = await Promise.all([this.#connectMcp(session, p.mcpServers), old && this.#dropMcp(old)])
    this.#attach(session, session.lastSeq, mcp)
    this.#afterResponse(session, mcp)
    return { ...this.#selectors(session), ...mcpMeta(mcp) }
  }

  async #close(id: string) {
    const a = this.#att(id)
    a.session.cancel()
    for (const c of a.asks.values()) c.abort(new Error('session closed'))
    this.#sessions.delete(id)
    if (a.tools) a.session.releaseTools(a.tools)
    await a.pump.stop()
    await this.#dropMcp(a)
    // Closed here: another process may write the session now (the file store's owner marker).
    void this.#o.manager.letGo(a.session.id)
    return {}
  }

  async #setConfig(p: { sessionId: string; configId: string; value: unknown }) {
    const id = this.#att(p.sessionId).session.id
    if (typeof p.value !== 'string')
      throw RpcError.invalidParams([{ path: 'value', message: `${p.configId} takes a string value` }])
    const router = this.#o.manager.router
    let now: Selection
    if (p.configId === 'model') now = await router.setModel(id, p.value)
    else if (p.configId === 'mode') now = await router.setMode(id, p.value)
    else
      throw RpcError.invalidParams([
        { path: 'configId', message: `unknown config option "${p.configId}"; available: model, mode` },
      ])
    return { configOptions: configOptions(this.#o.manager.models.models(), now.model, now.mode) }
  }

  /** Updates that follow a session's new/load/resume response (never before it). */
  #afterResponse(session: Session, mcp?: SessionMcp): void {
    setImmediate(() => {
      if (!this.#sessions.has(session.id)) return
      void this.#update(session.id, {
        sessionUpdate: 'available_commands_update',
        availableCommands: availableCommands(this.#o.manager, session.meta.cwd),
      })
      const notice = mcpNotice(mcp)
      if (notice) void this.#update(session.id, notice)
    })
  }
}
