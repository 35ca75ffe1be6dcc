/**
 * ACP v1 adapter (specs/openrpc/acp-v1.openrpc.json–§10): the kit is the client. `initialize` with the
 * integer protocolVersion 1 and no fs/terminal capabilities (fs, served from the workspace, in
 * a `clientFs` scenario: client-fs.ts), `session/new`, `session/prompt`
 * (its response ends the turn), the `session/cancel` notification, the agent's
 * `session/request_permission` requests answered by option kind, `_session/steering`, and
 * `session/load` for resume (v1 has no cursor: the agent replays the whole history before its
 * response, and the adapter keeps what comes after the cursor by `_meta["chimera/eventId"]`).
 * Updates become observations; event ids come from `_meta["chimera/eventId"]` when the agent
 * sends them. The same adapter drives the agent over stdio (`acp-v1`, a spawned process) and
 * over the network (`acp-http`, `acp-ws`: the SDK's client transports, harness/arms/acp-net.ts).
 */
import { AcpSniffer } from '../../harness/sniffer.ts'
import { StdioArm, type StdioTarget } from '../../harness/arms/stdio.ts'
import { AcpNetArm, type AcpNetTarget } from '../../harness/arms/acp-net.ts'
import type { Decision } from '../corpus/scenario.ts'
import { toKitViolation, type KitViolation } from '../run/violations.ts'
import { Inbox } from '../../harness/arms/queue.ts'
import { OPTION_KIND, Unsupported, type Adapter, type AdapterContext, type Observation } from './types.ts'
import { Peer } from './peer.ts'
import { answerFs, insideWorkspace } from './client-fs.ts'

const textOf = (content: unknown): string => {
  const blocks = Array.isArray(content) ? content : [content]
  return blocks
    .map((b) => (b && typeof b === 'object' && (b as any).type === 'text' ? String((b as any).text) : ''))
    .join('')
}

/** Text of tool-call content (`{type:"content", content:{type:"text"}}` entries) or of rawOutput. */
function toolOutput(u: Record<string, any>): string {
  const parts = Array.isArray(u.content)
    ? u.content
        .map((c: any) =>
          c?.type === 'content' ? textOf(c.content) : c?.type === 'diff' ? String(c.newText ?? '') : '',
        )
        .filter(Boolean)
    : []
  if (parts.length) return parts.join('\n')
  if (u.rawOutput !== undefined) return typeof u.rawOutput === 'string' ? u.rawOutput : JSON.stringify(u.rawOutput)
  return ''
}

const STATUS_RANK: Record<string, number> = { pending: 0, in_progress: 1, completed: 2, failed: 2 }
const LIFECYCLE_SPEC =
  'specs/vendor/acp/schema.v1.json $defs.ToolCallUpdate ("an update to an existing tool call"), $defs.ToolCallStatus (pending → in_progress → completed | failed)'

/** The ACP v1 wires: stdio, Streamable HTTP, WebSocket. */
export type AcpV1Transport = 'acp-v1' | 'acp-http' | 'acp-ws'

export class AcpV1Adapter implements Adapter {
  readonly transport: AcpV1Transport
  readonly #ctx: AdapterContext
  readonly #peer: Peer
  readonly #sniffer = new AcpSniffer()
  readonly #inbox = new Inbox<Observation>()
  readonly #caps = new Set<string>()
  readonly #extra: KitViolation[] = []
  readonly #sessions = new Map<string, string>() // kit name → sessionId
  readonly #names = new Map<string, string>() // sessionId → kit name
  readonly #prompts = new Map<string, string>() // request id → kit session
  readonly #perms = new Map<string, { id: unknown; options: { optionId: string; kind: string }[]; session: string }>()
  readonly #calls = new Map<string, { tool?: string; kind?: string }>()
  /** Per `sessionId toolCallId`: the status the agent last gave the call (lifecycle check). */
  readonly #status = new Map<string, string>()
  #replaying: { id: string; session: string; after: number } | undefined
  #initialized = false

  constructor(transport: 'acp-v1', target: StdioTarget, ctx: AdapterContext)
  constructor(transport: 'acp-http' | 'acp-ws', target: AcpNetTarget, ctx: AdapterContext)
  constructor(transport: AcpV1Transport, target: StdioTarget | AcpNetTarget, ctx: AdapterContext) {
    this.transport = transport
    this.#ctx = ctx
    const arm =
      transport === 'acp-v1'
        ? new StdioArm(target as StdioTarget, [], this.#sniffer)
        : new AcpNetArm(transport, target as AcpNetTarget, this.#sniffer)
    this.#peer = new Peer(arm, (m) => this.#frame(m))
  }

  capabilities(): ReadonlySet<string> {
    return this.#caps
  }

  #emit(o: Omit<Observation, 'session'> & { session?: string }, sessionId?: unknown): void {
    const session = o.session ?? (typeof sessionId === 'string' ? this.#names.get(sessionId) : undefined) ?? 'main'
    this.#inbox.push({ ...o, session } as Observation)
  }

  #frame(m: Record<string, any>): void {
    if (m.method === 'session/update') return this.#update(m)
    if (typeof m.method === 'string' && 'id' in m) return void this.#agentRequest(m)
    if (m.method === undefined && 'id' in m) {
      const key = JSON.stringify(m.id)
      const session = this.#prompts.get(key)
      if (session !== undefined) {
        this.#prompts.delete(key)
        if (m.error)
          return this.#emit({
            kind: 'turn_end',
            session,
            wireType: 'session/prompt error',
            outcome: 'failed',
            output: String(m.error?.message ?? ''),
            frame: m,
          })
        const reason = m.result?.stopReason
        return this.#emit({
          kind: 'turn_end',
          session,
          wireType: `stopReason:${reason}`,
          outcome: reason === 'cancelled' ? 'cancelled' : reason === 'end_turn' ? 'completed' : 'failed',
          output: String(reason),
          frame: m,
        })
      }
      if (this.#replaying && key === this.#replaying.id) {
        const session = this.#replaying.session
        this.#replaying = undefined
        this.#emit({
          kind: 'replay_end',
          session,
          wireType: m.error ? 'session/load error' : 'session/load',
          output: m.error ? JSON.stringify(m.error) : undefined,
          frame: m,
        })
      }
    }
  }

  #update(m: Record<string, any>): void {
    const p = m.params ?? {}
    const u = p.update ?? {}
    const eventId = typeof p._meta?.['chimera/eventId'] === 'number' ? p._meta['chimera/eventId'] : undefined
    const base = {
      eventId,
      wireType: String(u.sessionUpdate),
      frame: m,
      replay: this.#replaying !== undefined || undefined,
    }
    const sid = p.sessionId
    if (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') this.#lifecycle(m, String(sid), u)
    // session/load replays everything: what is not after the cursor is not part of this resume.
    if (this.#replaying && eventId !== undefined && eventId <= this.#replaying.after) return
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
        return this.#emit({ ...base, kind: 'text', text: textOf(u.content) }, sid)
      case 'agent_thought_chunk':
        return this.#emit({ ...base, kind: 'thought', text: textOf(u.content) }, sid)
      case 'tool_call': {
        this.#calls.set(u.toolCallId, { tool: u.title, kind: u.kind })
        const action = this.#ctx.profile.actionOfKind(u.kind) ?? this.#ctx.profile.actionOfTool(u.title)
        return this.#emit(
          { ...base, kind: 'tool_call', callId: u.toolCallId, tool: u.title, action, args: u.rawInput },
          sid,
        )
      }
      case 'tool_call_update': {
        if (u.status === 'completed' || u.status === 'failed') {
          return this.#emit(
            {
              ...base,
              kind: 'tool_result',
              callId: u.toolCallId,
              tool: this.#calls.get(u.toolCallId)?.tool,
              ok: u.status === 'completed',
              output: toolOutput(u),
            },
            sid,
          )
        }
        return this.#emit({ ...base, kind: 'event' }, sid)
      }
      default:
        return this.#emit({ ...base, kind: 'event' }, sid)
    }
  }

  /**
   * Tool-call lifecycle (schema: ToolCallUpdate is "an update to an existing tool call";
   * ToolCallStatus runs pending → in_progress → completed | failed): an update only for a call a
   * `tool_call` announced, and a status never moving back (nor from one end to the other).
   */
  #lifecycle(m: Record<string, any>, sid: string, u: Record<string, any>): void {
    const key = `${sid} ${String(u.toolCallId)}`
    const status = typeof u.status === 'string' && u.status in STATUS_RANK ? (u.status as string) : undefined
    const flag = (problem: string): void => {
      this.#extra.push({
        rule: 'acp.v1.tool-call.lifecycle',
        dir: 'out',
        frame: JSON.stringify(m).slice(0, 600),
        problem,
        spec: LIFECYCLE_SPEC,
      })
    }
    if (u.sessionUpdate === 'tool_call') {
      // A session/load replay announces its calls again, from their start.
      this.#status.set(key, status ?? 'pending')
      return
    }
    const was = this.#status.get(key)
    if (was === undefined)
      return flag(`tool_call_update for ${JSON.stringify(u.toolCallId)}, which no tool_call announced before`)
    if (status === undefined || status === was) return
    if (STATUS_RANK[status]! <= STATUS_RANK[was]!)
      return flag(
        `tool call ${JSON.stringify(u.toolCallId)} went from ${was} back to ${status} (a status never moves backwards)`,
      )
    this.#status.set(key, status)
  }

  async #agentRequest(m: Record<string, any>): Promise<void> {
    if (m.method === 'session/request_permission') {
      const session = this.#names.get(m.params?.sessionId) ?? 'main'
      const tc = m.params?.toolCall ?? {}
      const known = this.#calls.get(tc.toolCallId) ?? {}
      const kind = tc.kind ?? known.kind
      const tool = tc.title ?? known.tool
      const requestId = `perm-${JSON.stringify(m.id)}`
      this.#perms.set(requestId, { id: m.id, options: m.params?.options ?? [], session })
      return this.#emit({
        kind: 'permission',
        session,
        wireType: m.method,
        requestId,
        tool,
        action: this.#ctx.profile.actionOfKind(kind) ?? this.#ctx.profile.actionOfTool(tool),
        callId: tc.toolCallId,
        frame: m,
      })
    }
    // A clientFs scenario: the kit is a client with a file system, serving the workspace.
    if (this.#ctx.clientFs && /^fs\/(read|write)_text_file$/.test(m.method)) {
      const session = this.#names.get(m.params?.sessionId) ?? 'main'
      this.#emit({
        kind: 'client_request',
        session,
        wireType: m.method,
        text: insideWorkspace(this.#ctx.workspace, m.params?.path),
        frame: m,
      })
      await this.#peer
        .send({ jsonrpc: '2.0', id: m.id, ...answerFs(this.#ctx.workspace, m.method, m.params) })
        .catch(() => {})
      return
    }
    // The kit advertised no such fs or terminal capability: the agent must not ask (specs/vendor/acp/schema.v1.json capabilities).
    if (/^(fs|terminal)\//.test(m.method)) {
      this.#extra.push({
        rule: 'acp.v1.capabilities.respected',
        dir: 'out',
        frame: JSON.stringify(m).slice(0, 600),
        problem: `the agent called ${m.method} though the client advertised no such capability`,
        spec: 'specs/vendor/acp/schema.v1.json capabilities (client capabilities)',
      })
    }
    await this.#peer
      .send({
        jsonrpc: '2.0',
        id: m.id,
        error: { code: -32601, message: 'Method not found', data: { method: m.method } },
      })
      .catch(() => {})
  }

  async #initialize(): Promise<void> {
    const r = await this.#peer.request(
      'initialize',
      {
        protocolVersion: 1,
        clientCapabilities: {
          fs: { readTextFile: this.#ctx.clientFs === true, writeTextFile: this.#ctx.clientFs === true },
          terminal: false,
        },
        clientInfo: { name: 'chimera-conformance', version: '1' },
      },
      this.#ctx.timeoutMs + this.#ctx.startupGraceMs,
    )
    if (r.error) throw new Error(`initialize failed: ${JSON.stringify(r.error)}`)
    if (r.result?.protocolVersion !== 1)
      throw new Error(`initialize answered protocolVersion ${JSON.stringify(r.result?.protocolVersion)}, not 1`)
    const caps = r.result?.agentCapabilities ?? {}
    if (caps.loadSession) this.#caps.add('load-session')
    for (const k of Object.keys(caps.sessionCapabilities ?? {})) this.#caps.add(`session-${k}`)
    if (caps.promptCapabilities?.image) this.#caps.add('prompt-image')
    if (r.result?._meta?.steering?.supported) this.#caps.add('steering')
    this.#initialized = true
  }

  async open(session: string): Promise<void> {
    if (!this.#initialized) await this.#initialize()
    // Start-up is the handshake and the first session (an agent may load its providers there).
    const wait = this.#ctx.timeoutMs + (this.#sessions.size === 0 ? this.#ctx.startupGraceMs : 0)
    const r = await this.#peer.request('session/new', { cwd: this.#ctx.workspace, mcpServers: [] }, wait)
    if (r.error || typeof r.result?.sessionId !== 'string')
      throw new Error(`session/new failed: ${JSON.stringify(r.error ?? r.result)}`)
    this.#sessions.set(session, r.result.sessionId)
    this.#names.set(r.result.sessionId, session)
    // The profile's way to select the model double where a config file alone does not.
    for (const [configId, raw] of Object.entries(this.#ctx.profile.profile.acpSessionConfig)) {
      const value = raw.replace('${double.model}', this.#ctx.doubleModel ?? '')
      const c = await this.#peer.request(
        'session/set_config_option',
        { sessionId: r.result.sessionId, configId, value },
        wait,
      )
      if (c.error) throw new Error(`session/set_config_option ${configId}=${value} failed: ${JSON.stringify(c.error)}`)
    }
  }

  #sid(session: string): string {
    const id = this.#sessions.get(session)
    if (!id) throw new Error(`session ${session} is not open`)
    return id
  }

  async prompt(session: string, text: string): Promise<void> {
    const id = await this.#peer.requestNoWait('session/prompt', {
      sessionId: this.#sid(session),
      prompt: [{ type: 'text', text }],
    })
    this.#prompts.set(JSON.stringify(id), session)
  }

  async cancel(session: string): Promise<void> {
    // The client answers its own pending permission requests with `cancelled` (the ACP v1 protocol (docs/zed.md)).
    for (const [rid, p] of this.#perms) {
      if (p.session !== session) continue
      this.#perms.delete(rid)
      await this.#peer.send({ jsonrpc: '2.0', id: p.id, result: { outcome: { outcome: 'cancelled' } } })
    }
    await this.#peer.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: this.#sid(session) } })
  }

  async steer(session: string, text: string): Promise<void> {
    if (!this.#caps.has('steering')) throw new Unsupported('the agent does not advertise _meta.steering.supported')
    await this.#peer.requestNoWait('_session/steering', {
      sessionId: this.#sid(session),
      prompt: [{ type: 'text', text }],
    })
  }

  async answer(_session: string, requestId: string, decision: Decision): Promise<void> {
    const p = this.#perms.get(requestId)
    if (!p) throw new Error(`no pending permission request ${requestId}`)
    const option = p.options.find((o) => o.kind === OPTION_KIND[decision])
    if (!option)
      throw new Error(
        `the permission request offers no ${OPTION_KIND[decision]} option (offered: ${p.options.map((o) => o.kind).join(', ')})`,
      )
    this.#perms.delete(requestId)
    await this.#peer.send({
      jsonrpc: '2.0',
      id: p.id,
      result: { outcome: { outcome: 'selected', optionId: option.optionId } },
    })
  }

  async resume(session: string, afterId: number): Promise<void> {
    if (!this.#caps.has('load-session')) throw new Unsupported('the agent does not advertise loadSession')
    const id = await this.#peer.requestNoWait('session/load', {
      sessionId: this.#sid(session),
      cwd: this.#ctx.workspace,
      mcpServers: [],
    })
    this.#replaying = { id: JSON.stringify(id), session, after: afterId }
  }

  next(ms: number): Promise<Observation | undefined> {
    return this.#inbox.next(ms)
  }

  violations(): KitViolation[] {
    return [...this.#peer.arm.violations().map((v) => toKitViolation(this.transport, v)), ...this.#extra]
  }

  agent(): { name: string; version: string } | undefined {
    return this.#peer.arm.agentInfo
  }

  transcript(): string[] {
    return this.#peer.transcript()
  }

  async dispose(): Promise<void> {
    await this.#peer.dispose()
    this.#inbox.close()
  }
}
