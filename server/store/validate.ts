/**
 * Input checks shared by every event store, so the file and memory stores refuse exactly the
 * same things: events against `ChimeraEventSchema` and their `data` against the per-type schema,
 * summaries against `SessionSummarySchema`, and session meta by hand (it is not a wire shape).
 */
import * as z from 'zod'
import { formatIssues } from '../../client/wire/issues.ts'
import {
  ChimeraEventSchema,
  EventDataByTypeSchema,
  EventTypeSchema,
  SessionSummarySchema,
  type SessionSummary,
} from '../../generated/schemas.gen.ts'
import { lazySchema, plainWithAnyMember, shapeMember } from '../../generated/lazy-schema.gen.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { ChimeraError, shownId } from '../errors.ts'
import { AGENT_PREFIXES, isSessionId } from './paths.ts'
import type { SessionMeta } from './types.ts'

/** Throw `invalid_session_id` unless `id` is a valid session id. */
export function checkSessionId(id: unknown): asserts id is string {
  if (!isSessionId(id)) throw new ChimeraError('invalid_session_id', `invalid session id: ${shownId(id)}`)
}

/**
 * The envelope with `data` left to the per-type check that precedes it: the envelope's `data`
 * union tries the event types' schemas one by one, which cost about 30 times the rest of the
 * check on every append.
 */
const envelope = lazySchema(
  () => ChimeraEventSchema.extend({ data: z.unknown() }),
  () => plainWithAnyMember(ChimeraEventSchema, 'data'),
)

/**
 * Events built in this process by a session's event writer (core/event-writer.ts): their data
 * passed the per-type check when it was recorded, and the writer made the envelope. The check's
 * result is a copy of every member it types; the members the schema leaves open (a tool call's
 * `args`, a result's `data`) are the caller's own objects, but the full check accepts any value
 * there too. A store takes these events without checking them again (a bad session id is still
 * refused); any other event, one a caller made or one from another process, is checked in full.
 */
const builtEvents = new WeakSet<object>()

/** Mark `e` as built by the event writer from checked data (see `builtEvents`); returns it. */
export function builtEvent<E extends AnyEvent>(e: E): E {
  builtEvents.add(e)
  return e
}

/** Why `event` is not a valid stored event, or undefined when it is. */
export function eventProblem(event: unknown): string | undefined {
  // The per-type data schema first: the envelope's `data` union only says "Invalid input".
  const type = EventTypeSchema.safeParse(
    typeof event === 'object' && event !== null ? (event as { type?: unknown }).type : undefined,
  )
  if (type.success) {
    const data = shapeMember(EventDataByTypeSchema, type.data).safeParse((event as { data?: unknown }).data)
    if (!data.success) return `data of a ${type.data} event: ${formatIssues(data.error)}`
  }
  // With the data valid for its (valid) type, the union would accept it: check the rest only.
  const env = (type.success ? envelope : ChimeraEventSchema).safeParse(event)
  return env.success ? undefined : formatIssues(env.error)
}

/** The event itself when valid; otherwise a `ChimeraError` (`invalid_event`). */
export function validateEvent(event: unknown): AnyEvent {
  const problem = builtEvents.has(event as object) ? undefined : eventProblem(event)
  if (problem !== undefined) throw new ChimeraError('invalid_event', `invalid event: ${problem}`)
  const e = event as AnyEvent
  checkSessionId(e.session_id)
  return e
}

/** Throw `seq_mismatch` unless `seq` directly follows `last`. */
export function checkNextSeq(sessionId: string, seq: number, last: number): void {
  if (seq !== last + 1) {
    throw new ChimeraError('seq_mismatch', `event seq ${seq} rejected for session ${sessionId}: expected ${last + 1}`, {
      detail: { expected: last + 1, got: seq },
    })
  }
}

/** Why `meta` is not a valid `SessionMeta`, or undefined when it is. */
export function metaProblem(meta: unknown): string | undefined {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return 'not an object'
  const m = meta as Record<string, unknown>
  if (!isSessionId(m.session_id)) return `session_id ${shownId(m.session_id)} is not a session id`
  if (!AGENT_PREFIXES.includes(m.agent as never))
    return `agent ${shownId(m.agent)} is not one of ${AGENT_PREFIXES.join(', ')}`
  if (!m.session_id.startsWith(`${m.agent as string}-`)) return 'session_id does not start with the agent prefix'
  for (const k of ['cwd', 'model', 'mode', 'created_at'] as const)
    if (typeof m[k] !== 'string') return `${k} must be a string`
  const tools = m.allowed_tools
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string')))
    return 'allowed_tools must be a string array'
  if (m.max_steps !== undefined && !(Number.isSafeInteger(m.max_steps) && (m.max_steps as number) >= 0))
    return 'max_steps must be a non-negative integer'
  if (m.approval !== undefined && !['allow', 'deny', 'ask', 'auto', 'read-only'].includes(m.approval as string))
    return 'approval must be allow, deny, ask, auto or read-only'
  return undefined
}

/** The meta itself when valid; otherwise a `ChimeraError` (`invalid_meta`). */
export function validateMeta(meta: unknown): SessionMeta {
  const problem = metaProblem(meta)
  if (problem !== undefined) throw new ChimeraError('invalid_meta', `invalid session meta: ${problem}`)
  return meta as SessionMeta
}

/**
 * The summary itself when valid for `sessionId`; otherwise a `ChimeraError` (`invalid_summary`).
 * A valid summary is accepted by the schema's plain check, which builds no zod schema
 * (docs/decisions/0450-plain-checks-before-zod.md).
 */
export function validateSummary(sessionId: string, summary: unknown): SessionSummary {
  const r = SessionSummarySchema.safeParse(summary)
  if (!r.success) throw new ChimeraError('invalid_summary', `invalid session summary: ${formatIssues(r.error)}`)
  if (r.data.session_id !== sessionId) {
    throw new ChimeraError(
      'invalid_summary',
      `summary session_id ${shownId(r.data.session_id)} does not match session ${sessionId}`,
    )
  }
  return summary as SessionSummary
}

/** The summary rebuilt from meta alone, when the stored one is missing or damaged. */
export function minimalSummary(meta: SessionMeta, eventCount?: number): SessionSummary {
  const ms = Date.parse(meta.created_at)
  const s: SessionSummary = { session_id: meta.session_id, model: meta.model, working_dir: meta.cwd, status: 'idle' }
  if (Number.isFinite(ms)) {
    s.started_at = new Date(ms).toISOString()
    s.created_at = ms / 1000
  }
  if (eventCount !== undefined) s.event_count = eventCount
  return s
}

/** A deep copy through JSON, i.e. exactly what a reader of the file store gets back. */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}
