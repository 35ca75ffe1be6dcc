/**
 * Seed-dialect ACP adapter (docs/zed.md otter, docs/zed.md ferret; specs/openrpc/acp-seed.openrpc.yaml):
 * `initialize` without the integer protocolVersion 1, `session/new`, `session/message` (its
 * response ends the turn), `session/cancel` as a request, `permission_request` updates answered
 * with `permission/respond` (otter `{requestId, reply}`, ferret `{sessionId, id, decision}`), and
 * `session/resume {sinceEventId}` for replay. Both update shapes are read: otter's
 * `{eventId, update: {sessionUpdate…}}` and ferret's flat `{eventId, kind…}`.
 */
import { AcpSniffer } from '../../harness/sniffer.ts'
import { StdioArm, type StdioTarget } from '../../harness/arms/stdio.ts'
import { Inbox } from '../../harness/arms/queue.ts'
import type { Decision, Outcome } from '../corpus/scenario.ts'
import { toKitViolation, type KitViolation } from '../run/violations.ts'
import { Unsupported, type Adapter, type AdapterContext, type Observation } from './types.ts'
import { Peer } from './peer.ts'

const textOf = (content: unknown): string =>
  (Array.isArray(content) ? content : [content]).map((b: any) => (b?.type === 'text' ? String(b.text) : '')).join('')
const OUTCOME: Record<string, Outcome> = {
  end_turn: 'completed',
  cancelled: 'cancelled',
  error: 'failed',
  max_steps: 'failed',
}

export class AcpSeedAdapter implements Adapter {
  readonly transport: 'acp-otter' | 'acp-ferret'
  readonly #ctx: AdapterContext
  readonly #peer: Peer
  readonly #sniffer = new AcpSniffer()
  readonly #inbox = new Inbox<Observation>()
  readonly #caps = new Set<string>()
  readonly #sessions = new Map<string, string>()
  readonly #names = new Map<string, string>()
  readonly #prompts = new Map<string, string>()
  readonly #perms = new Map<string, { shape: 'otter' | 'ferret'; sessionId: string; id: string }>()
  readonly #tools = new Map<string, string>()
  #replaying: { id: string; session: string } | undefined
  #initialized = false

  constructor(transport: 'acp-otter' | 'acp-ferret', target: StdioTarget, ctx: AdapterContext) {
    this.transport = transport
    this.#ctx = ctx
    this.#peer = new Peer(new StdioArm(target, [], this.#sniffer), (m) => this.#frame(m))
  }

  capabilities(): ReadonlySet<string> {
    return this.#caps
  }

  #emit(o: Omit<Observation, 'session'>, sessionId: unknown): void {
    const session = (typeof sessionId === 'string' ? this.#names.get(sessionId) : undefined) ?? 'main'
    this.#inbox.push({ ...o, session })
  }

  #frame(m: Record<string, any>): void {
    if (m.method === 'session/update') return this.#update(m.params ?? {}, m)
    if (m.method === undefined && 'id' in m) {
      const key = JSON.stringify(m.id)
      const session = this.#prompts.get(key)
      if (session !== undefined) {
        this.#prompts.delete(key)
        const sid = this.#sessions.get(session)
        if (m.error)
          return this.#emit(
            {
              kind: 'turn_end',
              wireType: 'session/message error',
              outcome: 'failed',
              output: String(m.error?.message ?? ''),
              frame: m,
            },
            sid,
          )
        const reason = String(m.result?.stopReason)
        const outcome = m.result?.cancelled === true ? 'cancelled' : (OUTCOME[reason] ?? 'failed')
        return this.#emit(
          {
            kind: 'turn_end',
            wireType: `stopReason:${reason}`,
            outcome,
            output: typeof m.result?.message === 'string' ? m.result.message : textOf(m.result?.message?.content),
            frame: m,
          },
          sid,
        )
      }
      if (this.#replaying && key === this.#replaying.id) {
        const sid = this.#sessions.get(this.#replaying.session)
        this.#replaying = undefined
        this.#emit({ kind: 'replay_end', wireType: 'session/resume', frame: m }, sid)
      }
    }
  }

  #update(p: Record<string, any>, m: unknown): void {
    const flat = typeof p.kind === 'string'
    const u = flat ? p : (p.update ?? {})
    const type = String(flat ? p.kind : u.sessionUpdate)
    const base = {
      eventId: typeof p.eventId === 'number' ? p.eventId : undefined,
      wireType: type,
      frame: m,
      replay: this.#replaying !== undefined || undefined,
    }
    const sid = p.sessionId
    const tool = (name: unknown) => ({ tool: String(name), action: this.#ctx.profile.actionOfTool(String(name)) })
    switch (type) {
      case 'agent_message_chunk':
        return this.#emit({ ...base, kind: 'text', text: flat ? String(u.text) : textOf(u.content) }, sid)
      case 'tool_call':
        this.#tools.set(u.callId, u.tool)
        return this.#emit({ ...base, kind: 'tool_call', callId: u.callId, args: u.input, ...tool(u.tool) }, sid)
      case 'tool_call_start':
        this.#tools.set(u.id, u.tool)
        return this.#emit({ ...base, kind: 'tool_call', callId: u.id, args: u.args, ...tool(u.tool) }, sid)
      case 'tool_result':
        return this.#emit(
          {
            ...base,
            kind: 'tool_result',
            callId: u.callId,
            tool: this.#tools.get(u.callId),
            ok: u.success === true && u.error === undefined,
            output: String(u.output ?? u.error ?? ''),
          },
          sid,
        )
      case 'tool_call_end': {
        const r = u.result
        const failed = r && typeof r === 'object' && (r.ok === false || typeof r.error === 'string')
        const output =
          typeof r === 'string'
            ? r
            : r && typeof r === 'object'
              ? String(r.output ?? r.error ?? JSON.stringify(r))
              : String(r ?? '')
        return this.#emit(
          { ...base, kind: 'tool_result', callId: u.id, tool: this.#tools.get(u.id), ok: !failed, output },
          sid,
        )
      }
      case 'permission_request': {
        const shape = flat ? 'ferret' : 'otter'
        const id = String(flat ? u.id : u.requestId)
        this.#perms.set(id, { shape, sessionId: sid, id })
        return this.#emit(
          { ...base, kind: 'permission', requestId: id, args: flat ? u.args : u.input, ...tool(u.tool) },
          sid,
        )
      }
      default:
        return this.#emit({ ...base, kind: 'event' }, sid)
    }
  }

  async #initialize(): Promise<void> {
    const r = await this.#peer.request(
      'initialize',
      { protocolVersion: this.transport === 'acp-ferret' ? '0.2' : '0.1' },
      this.#ctx.timeoutMs + this.#ctx.startupGraceMs,
    )
    if (r.error) throw new Error(`initialize failed: ${JSON.stringify(r.error)}`)
    const ac = r.result?.agentCapabilities ?? {}
    if (ac.eventIds) this.#caps.add('event-ids')
    if (ac.sessionCapabilities?.resume) this.#caps.add('resume')
    if (ac.toolApproval || r.result?.capabilities?.permissionRequest || r.result?.capabilities?.approval)
      this.#caps.add('permissions')
    this.#initialized = true
  }

  async open(session: string): Promise<void> {
    if (!this.#initialized) await this.#initialize()
    // Start-up is the handshake and the first session.
    const r = await this.#peer.request(
      'session/new',
      { cwd: this.#ctx.workspace },
      this.#ctx.timeoutMs + (this.#sessions.size === 0 ? this.#ctx.startupGraceMs : 0),
    )
    if (r.error || typeof r.result?.sessionId !== 'string')
      throw new Error(`session/new failed: ${JSON.stringify(r.error ?? r.result)}`)
    this.#sessions.set(session, r.result.sessionId)
    this.#names.set(r.result.sessionId, session)
  }

  #sid(session: string): string {
    const id = this.#sessions.get(session)
    if (!id) throw new Error(`session ${session} is not open`)
    return id
  }

  async prompt(session: string, text: string): Promise<void> {
    const id = await this.#peer.requestNoWait('session/message', { sessionId: this.#sid(session), prompt: text })
    this.#prompts.set(JSON.stringify(id), session)
  }

  async cancel(session: string): Promise<void> {
    await this.#peer.requestNoWait('session/cancel', { sessionId: this.#sid(session) })
  }

  async steer(): Promise<void> {
    throw new Unsupported('the seed dialect has no steering method')
  }

  async answer(_session: string, requestId: string, decision: Decision): Promise<void> {
    const p = this.#perms.get(requestId)
    if (!p) throw new Error(`no pending permission request ${requestId}`)
    this.#perms.delete(requestId)
    const params =
      p.shape === 'otter' ? { requestId: p.id, reply: decision } : { sessionId: p.sessionId, id: p.id, decision }
    await this.#peer.requestNoWait('permission/respond', params)
  }

  async resume(session: string, afterId: number): Promise<void> {
    if (!this.#caps.has('resume')) throw new Unsupported('the agent does not advertise sessionCapabilities.resume')
    const id = await this.#peer.requestNoWait('session/resume', {
      sessionId: this.#sid(session),
      sinceEventId: afterId,
    })
    this.#replaying = { id: JSON.stringify(id), session }
  }

  next(ms: number): Promise<Observation | undefined> {
    return this.#inbox.next(ms)
  }

  violations(): KitViolation[] {
    return this.#peer.arm.violations().map((v) => toKitViolation(this.transport, v))
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
