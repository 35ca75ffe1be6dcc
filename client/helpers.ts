/**
 * High-level helpers a UI needs, over the typed client: start a session (or another turn) and
 * follow it until its turn ends, answering permission requests through a callback; answer,
 * cancel, undo/redo, rename and the custom commands are one call each on the client itself
 * (`client.tool.approve`, `client.sessions.cancel`, `.undo`, `.redo`, `.rename`, `client.commands.list`,
 * `.invoke`) and are re-exported here under task names for discoverability.
 */
import type { ChimeraClient, CallOptions, SessionsCreateRequest, SessionSummary } from './api.ts'
import type { SessionStreamEvent } from './events/session-events.ts'
import type { PermissionDecision } from '../generated/schemas.gen.ts'

export type PermissionRequestEvent = Extract<SessionStreamEvent, { type: 'permission_request' }>
export type AgentResultEvent = Extract<SessionStreamEvent, { type: 'agent_result' }>

export interface FollowOptions {
  signal?: AbortSignal
  /** Every event of the turn, in order (the permission requests too). */
  onEvent?: (ev: SessionStreamEvent) => void
  /**
   * A permission request: return a decision to answer it (posted to `/tool/approve`), or
   * undefined to leave it to another client. Without this callback requests are left alone.
   */
  onPermission?: (
    req: PermissionRequestEvent,
  ) => PermissionDecision | undefined | Promise<PermissionDecision | undefined>
}

export interface TurnOutcome {
  session_id: string
  /** The turn's events (from its `user_message` to its terminal event). */
  events: SessionStreamEvent[]
  /** The `end` record's `success`: false for a failed, cancelled or deleted turn. */
  success: boolean
  /** The turn's final answer (`agent_result.output`), when it finished. */
  output: string | undefined
  result: AgentResultEvent | undefined
}

/** Creates a session with its first prompt and follows that turn to its end. */
export async function startSession(
  client: ChimeraClient,
  body: SessionsCreateRequest,
  o: FollowOptions = {},
): Promise<TurnOutcome> {
  const { session_id } = await client.sessions.create(body, { signal: o.signal })
  return followTurn(client, session_id, 0, o)
}

/** Sends another prompt to a session and follows that turn to its end. */
export async function continueSession(
  client: ChimeraClient,
  sessionId: string,
  prompt: string,
  o: FollowOptions = {},
): Promise<TurnOutcome> {
  const { summary, events } = await client.sessions.get(sessionId, { signal: o.signal })
  const from = summary.event_count ?? events.at(-1)?.seq ?? 0
  await client.sessions.addTurn(sessionId, prompt, { signal: o.signal })
  return followTurn(client, sessionId, from, o)
}

/** Follows a session's events after counter `from` until the stream's `end`. */
export async function followTurn(
  client: ChimeraClient,
  sessionId: string,
  from: number,
  o: FollowOptions = {},
): Promise<TurnOutcome> {
  const stream = client.sessions.events(sessionId, { from, signal: o.signal })
  const events: SessionStreamEvent[] = []
  let result: AgentResultEvent | undefined
  for await (const ev of stream) {
    events.push(ev)
    o.onEvent?.(ev)
    if (ev.type === 'agent_result') result = ev
    if (ev.type === 'permission_request' && o.onPermission) {
      const decision = await o.onPermission(ev)
      if (decision !== undefined)
        await answerPermission(client, sessionId, ev.metadata.request_id, decision, { signal: o.signal })
    }
  }
  return {
    session_id: sessionId,
    events,
    success: stream.end?.success ?? false,
    output: result?.metadata.output,
    result,
  }
}

/**
 * Renames a session for every client (`PATCH /sessions/{id}`): `title` is trimmed, at most 200
 * characters; `null` or `''` clears it (clients then derive a title from the first prompt).
 * Resolves to the session's summary.
 */
export function renameSession(
  client: ChimeraClient,
  sessionId: string,
  title: string | null,
  o?: CallOptions,
): Promise<SessionSummary> {
  return client.sessions.rename(sessionId, title, o)
}

/** Answers a pending permission request. */
export async function answerPermission(
  client: ChimeraClient,
  sessionId: string,
  requestId: string,
  decision: PermissionDecision,
  o?: CallOptions,
): Promise<void> {
  await client.tool.approve({ session_id: sessionId, request_id: requestId, decision }, o)
}
