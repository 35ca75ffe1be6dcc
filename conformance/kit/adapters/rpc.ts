/**
 * JSON-lines RPC adapter (docs/rpc.md; specs/asyncapi/rpc.asyncapi.yaml): one session per
 * process. `prompt` is acknowledged when its turn ends (docs/decisions/0008), so the
 * acknowledgement is the turn end; `message` chunks with `done: false` are the streamed text,
 * `tool_execution` the tool calls, `permission_request` / `permission_reply` the permission
 * round-trip (extensions), `steer` and `cancel` as written. No event ids, so no resume.
 */
import { RpcSniffer } from '../../harness/sniffer.ts'
import { StdioArm, type StdioTarget } from '../../harness/arms/stdio.ts'
import { Inbox } from '../../harness/arms/queue.ts'
import type { Decision } from '../corpus/scenario.ts'
import { toKitViolation, type KitViolation } from '../run/violations.ts'
import { Unsupported, type Adapter, type AdapterContext, type Observation } from './types.ts'
import { Peer } from './peer.ts'

export class RpcAdapter implements Adapter {
  readonly transport = 'rpc' as const
  readonly #ctx: AdapterContext
  readonly #peer: Peer
  readonly #inbox = new Inbox<Observation>()
  readonly #seen = new Set<string>()
  readonly #prompts = new Set<string>()
  readonly #extra: KitViolation[] = []
  /** Text streamed (`done: false`) in this turn since the last complete message (`done: true`). */
  #unfinished = ''
  #n = 0
  #opened = false

  constructor(target: StdioTarget, ctx: AdapterContext) {
    this.#ctx = ctx
    this.#peer = new Peer(new StdioArm(target, [], new RpcSniffer()), (m) => this.#frame(m))
  }

  capabilities(): ReadonlySet<string> {
    return new Set(['permissions', 'steering'])
  }

  #emit(o: Omit<Observation, 'session'>): void {
    this.#inbox.push({ ...o, session: 'main' })
  }

  #frame(m: Record<string, any>): void {
    const base = { wireType: String(m.type ?? 'response'), frame: m }
    switch (m.type) {
      case 'message':
        if (m.done === true) {
          // The turn's last assistant message, complete: what the last chunks streamed (a turn with
          // tool calls streams text before them that is not part of it).
          const content = String(m.content)
          if (this.#unfinished && (!content || !this.#unfinished.endsWith(content)))
            this.#flagFinal(
              m,
              `the complete message ${JSON.stringify(content.slice(0, 200))} is not the end of the text streamed before it (${JSON.stringify(this.#unfinished.slice(-200))})`,
            )
          this.#unfinished = ''
          return this.#emit({ ...base, kind: 'text_final', text: String(m.content) })
        }
        this.#unfinished += String(m.content)
        return this.#emit({ ...base, kind: 'text', text: String(m.content) })
      case 'reasoning':
        return this.#emit({ ...base, kind: 'thought', text: String(m.content ?? m.text ?? '') })
      case 'tool_execution': {
        const id = String(m.call_id)
        const call = {
          callId: id,
          tool: String(m.tool_name),
          action: this.#ctx.profile.actionOfTool(String(m.tool_name)),
          args: m.tool_args,
        }
        // `started` opens a call; a call refused before it ran has only `failed`.
        if (!this.#seen.has(id)) {
          this.#seen.add(id)
          this.#emit({ ...base, kind: 'tool_call', ...call })
        }
        if (m.status === 'completed' || m.status === 'failed')
          this.#emit({
            ...base,
            kind: 'tool_result',
            ...call,
            ok: m.status === 'completed',
            output: typeof m.result === 'string' ? m.result : JSON.stringify(m.result ?? ''),
          })
        return
      }
      case 'permission_request':
        return this.#emit({
          ...base,
          kind: 'permission',
          requestId: String(m.request_id),
          callId: String(m.call_id),
          tool: String(m.tool_name),
          action: this.#ctx.profile.actionOfTool(String(m.tool_name)),
          args: m.tool_args,
        })
      case 'response':
      case undefined: {
        const key = JSON.stringify(m.id)
        if (m.command === 'prompt' && this.#prompts.has(key)) {
          this.#prompts.delete(key)
          const outcome = m.success ? 'completed' : /cancel/i.test(String(m.error)) ? 'cancelled' : 'failed'
          // A completed turn ends its streamed text with the complete message (done: true).
          if (outcome === 'completed' && this.#unfinished)
            this.#flagFinal(
              m,
              `the turn completed after streaming ${JSON.stringify(this.#unfinished.slice(0, 200))} without its complete message (a message with done: true)`,
            )
          this.#unfinished = ''
          return this.#emit({
            ...base,
            wireType: 'response:prompt',
            kind: 'turn_end',
            outcome,
            output: String(m.error ?? ''),
          })
        }
        return this.#emit({ ...base, wireType: `response:${m.command}`, kind: 'event' })
      }
      default:
        return this.#emit({ ...base, kind: 'event' })
    }
  }

  #flagFinal(m: unknown, problem: string): void {
    this.#extra.push({
      rule: 'rpc.turn.final-message',
      dir: 'out',
      frame: JSON.stringify(m).slice(0, 600),
      problem,
      spec: "specs/asyncapi/rpc.asyncapi.yaml components.schemas.MessageEvent (chunks have done false; the turn's complete message comes last with done true)",
    })
  }

  async open(session: string): Promise<void> {
    if (this.#opened || session !== 'main') throw new Unsupported('the JSON-lines RPC drives one session per process')
    this.#opened = true
  }

  async prompt(_session: string, text: string): Promise<void> {
    const id = `p${++this.#n}`
    this.#prompts.add(JSON.stringify(id))
    await this.#peer.send({ type: 'prompt', id, message: text })
  }

  async cancel(): Promise<void> {
    await this.#peer.send({ type: 'cancel', id: `c${++this.#n}` })
  }

  async steer(_session: string, text: string): Promise<void> {
    await this.#peer.send({ type: 'steer', id: `s${++this.#n}`, message: text })
  }

  async answer(_session: string, requestId: string, decision: Decision): Promise<void> {
    await this.#peer.send({ type: 'permission_reply', id: `a${++this.#n}`, request_id: requestId, decision })
  }

  async resume(): Promise<void> {
    throw new Unsupported('the JSON-lines RPC has no event ids to resume from')
  }

  next(ms: number): Promise<Observation | undefined> {
    return this.#inbox.next(ms)
  }

  violations(): KitViolation[] {
    return [...this.#peer.arm.violations().map((v) => toKitViolation('rpc', v)), ...this.#extra]
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
