/**
 * The in-memory state behind the msw handlers: sessions whose turns replay a recorded
 * transcript (renumbered, with the session id and prompt of the mock session), per-session
 * tokens, pending permission requests, undo/redo counts, and live subscribers that get events
 * appended after they connected. Everything a handler answers is derived from here, so a test can
 * inspect or extend it (`mock.state.append(...)`).
 */
import type {
  ChimeraEvent,
  EventDataByType,
  EventType,
  LoopEventEnvelope,
  SseEnvelope,
} from '../../generated/schemas.gen.ts'
import type { SessionStreamEvent } from '../events/session-events.ts'

/** A recording: canonical events (the event log, `GET /sessions/{id}` events) or what `client.sessions.events()` yielded. */
export type Recording = readonly ChimeraEvent[] | readonly SessionStreamEvent[]

export interface MockSession {
  id: string
  token: string
  workingDir: string
  createdAt: number
  lastTouched: number
  model: string
  prompt: string
  events: ChimeraEvent[]
  turns: number
  undone: number
  /** The singular family's subscribers, told about each event appended after they connected. */
  listeners: Set<(e: ChimeraEvent | null) => void>
  /** With `askPermissions`: the turn waiting for the answer to this request, and what it plays next. */
  held?: { requestId: string; callId: string; tool: string; rest: TurnItem[] }
}

/** One event of a turn still to be appended. */
interface TurnItem {
  type: EventType
  data: Record<string, unknown>
  turn: number
}

/** Canonical events from a recording, in seq order. */
export function toChimeraEvents(rec: Recording, sessionId = 'otter-20260101T000000Z-recorded'): ChimeraEvent[] {
  let turn = -1
  let prev: string | undefined
  return [...rec]
    .sort((a, b) => a.seq - b.seq)
    .map((e) => {
      if ('data' in e && 'session_id' in e) return e
      const s = e as SessionStreamEvent
      // A turn opens with its user message (or a turn_start that follows none).
      if (s.type === 'user_message' || (s.type === 'turn_start' && prev !== 'user_message')) turn++
      prev = s.type
      return {
        seq: s.seq,
        id: s.id,
        session_id: sessionId,
        type: s.type,
        turn: Math.max(0, turn),
        ts: s.ts,
        data: s.metadata,
      } as ChimeraEvent
    })
}

/** `data:` of a plural-family record. */
export const toSseEnvelope = (e: ChimeraEvent): SseEnvelope =>
  ({ id: e.id, type: e.type, metadata: e.data, ts: e.ts }) as SseEnvelope

/** `event:` name and `data:` of a singular-family record. */
export function toLoopRecord(
  e: ChimeraEvent,
  messageId: string,
): { event: 'loop_event' | 'user_message' | 'result'; data: LoopEventEnvelope } {
  const event = e.type === 'user_message' ? 'user_message' : e.type === 'agent_result' ? 'result' : 'loop_event'
  return {
    event,
    data: {
      message_id: messageId,
      type: e.type,
      data: e.data,
      turn: e.turn,
      timestamp: Date.parse(e.ts),
    } as LoopEventEnvelope,
  }
}

let counter = 0
const uuid = (): string => {
  const c = globalThis.crypto as Crypto | undefined
  if (c?.randomUUID) return c.randomUUID()
  counter++
  return `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`
}

export class MockState {
  readonly sessions = new Map<string, MockSession>()
  readonly #template: ChimeraEvent[]
  readonly #cwd: string

  readonly #ask: boolean

  /**
   * `askPermissions`: a turn stops at each recorded `permission_request` until it is answered
   * (`POST /tool/approve`), instead of replaying the recorded answer; allowing plays the rest of
   * the recording, denying fails that tool call and plays on after its recorded result.
   */
  constructor(transcript: Recording, cwd = '/workspace', opts: { askPermissions?: boolean } = {}) {
    this.#template = toChimeraEvents(transcript)
    this.#cwd = cwd
    this.#ask = opts.askPermissions ?? false
    if (this.#template.length === 0) throw new TypeError('the transcript has no events')
  }

  create(o: { prompt?: string; model?: string; workingDir?: string } = {}): MockSession {
    const stamp = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z')
    const now = Date.now() / 1000
    const s: MockSession = {
      id: `otter-${stamp}-${uuid()}`,
      token: uuid().replaceAll('-', ''),
      workingDir: o.workingDir ?? this.#cwd,
      createdAt: now,
      lastTouched: now,
      model: o.model ?? 'offline',
      prompt: o.prompt ?? '',
      events: [],
      turns: 0,
      undone: 0,
      listeners: new Set(),
    }
    this.sessions.set(s.id, s)
    if (o.prompt !== undefined) this.runTurn(s, o.prompt)
    return s
  }

  /** Appends one replay of the transcript as a new turn; returns its user message id. */
  runTurn(s: MockSession, prompt: string): string {
    const turnBase = s.events.length === 0 ? 0 : s.events.at(-1)!.turn + 1
    const firstTurn = this.#template[0]!.turn
    const messageId = `msg-${uuid()}`
    s.turns++
    s.undone = 0
    if (!s.prompt) s.prompt = prompt
    const requestIds = new Map<string, string>()
    const items = this.#template.map((t): TurnItem => {
      let data = t.data as Record<string, unknown>
      if (t.type === 'user_message') data = { ...data, text: prompt, message_id: messageId }
      if (t.type === 'turn_start') data = { ...data, prompt }
      // Each turn's permission requests get ids of their own.
      if (typeof data.request_id === 'string' && (t.type === 'permission_request' || t.type === 'permission_reply')) {
        const id = requestIds.get(data.request_id) ?? `perm-${uuid()}`
        requestIds.set(data.request_id, id)
        data = { ...data, request_id: id }
      }
      return { type: t.type, data, turn: turnBase + (t.turn - firstTurn) }
    })
    this.#play(s, items)
    return messageId
  }

  #play(s: MockSession, items: TurnItem[]): void {
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!
      this.append(s, it.type, it.data as never, it.turn)
      if (this.#ask && it.type === 'permission_request') {
        const requestId = it.data.request_id as string
        // The recorded answer is not replayed: the caller's answer takes its place.
        const rest = items
          .slice(i + 1)
          .filter((x) => !(x.type === 'permission_reply' && x.data.request_id === requestId))
        s.held = { requestId, callId: it.data.call_id as string, tool: it.data.tool as string, rest }
        return
      }
    }
  }

  /** Answers a pending request: resumes a held turn, or records the reply. False when nothing is pending under that id. */
  answer(s: MockSession, requestId: string, decision: string): boolean {
    if (!this.pending(s).includes(requestId)) return false
    const held = s.held?.requestId === requestId ? s.held : undefined
    const turn = held?.rest[0]?.turn
    this.append(s, 'permission_reply', { request_id: requestId, decision, source: 'http' } as never, turn)
    if (!held) return true
    s.held = undefined
    if (decision === 'allow' || decision === 'always') {
      this.#play(s, held.rest)
      return true
    }
    // Denied: the call fails, and the recording goes on after that call's result.
    const after = held.rest.findIndex((x) => x.type === 'tool_result' && x.data.call_id === held.callId)
    this.append(
      s,
      'tool_result',
      { call_id: held.callId, tool: held.tool, ok: false, error: `the user denied ${held.tool}` } as never,
      turn,
    )
    this.#play(s, held.rest.slice(after + 1))
    return true
  }

  append<T extends EventType>(
    s: MockSession,
    type: T,
    data: EventDataByType[T],
    turn = s.events.at(-1)?.turn ?? 0,
  ): ChimeraEvent {
    const e = {
      seq: s.events.length + 1,
      id: `evt-${uuid()}`,
      session_id: s.id,
      type,
      turn,
      ts: new Date().toISOString(),
      data,
    } as ChimeraEvent
    s.events.push(e)
    s.lastTouched = Date.now() / 1000
    for (const l of s.listeners) l(e)
    return e
  }

  /** Cancels a turn held at a permission request (the request is answered `cancelled`); false when no turn is running. */
  cancel(s: MockSession): boolean {
    const held = s.held
    if (!held) return false
    s.held = undefined
    const turn = held.rest[0]?.turn
    this.append(
      s,
      'permission_reply',
      { request_id: held.requestId, decision: 'cancelled', source: 'http' } as never,
      turn,
    )
    this.append(s, 'cancelled', { partial_output: '', reason: 'cancelled by the user' } as never, turn)
    return true
  }

  /** Permission requests without a reply yet. */
  pending(s: MockSession): string[] {
    const replied = new Set(
      s.events.filter((e) => e.type === 'permission_reply').map((e) => (e.data as { request_id: string }).request_id),
    )
    return s.events
      .filter((e) => e.type === 'permission_request')
      .map((e) => (e.data as { request_id: string }).request_id)
      .filter((id) => !replied.has(id))
  }

  /** The user message id of the event's turn (the singular family's `message_id`). */
  messageIdOf(s: MockSession, e: ChimeraEvent): string {
    const um = s.events.find((x) => x.turn === e.turn && x.type === 'user_message')
    return (um?.data as { message_id?: string } | undefined)?.message_id ?? e.id
  }

  remove(id: string): boolean {
    const s = this.sessions.get(id)
    if (!s) return false
    for (const l of s.listeners) l(null)
    this.sessions.delete(id)
    return true
  }
}
