/**
 * What a v1 client is sent of a session's history: the mapping context of an attachment (live)
 * or of a replay (its own progress state, the calls already finished), and
 * `_chimera/session/replay` — the retained updates after a cursor, up to what the pump has written.
 */
import type { SessionManager } from '../../core/manager.ts'
import type { Session } from '../../core/session.ts'
import type { AnyEvent } from '../../events/event-types.ts'
import { historySize, replayWindow } from '../history.ts'
import type { Attachment } from './agent-types.ts'
import { listedTitle, toV1Updates, type V1MapContext, type V1Update } from './event-map.ts'
import { configOptions } from './session-config.ts'

/** The context the pump maps a session's live events with. */
export function liveMap(session: Session, manager: SessionManager, terminalOutput: boolean): V1MapContext {
  const models = manager.models
  return {
    cwd: session.meta.cwd,
    configOptions: (model, mode) => configOptions(models.models(), model, mode),
    model: () => session.model,
    mode: () => session.mode,
    title: () => listedTitle(session.summary),
    terminalOutput,
    outputs: new Map(),
  }
}

/** A context for replaying `events` (from the log's start): its own progress state; finished calls are known. */
export function replayMap(base: V1MapContext, events: readonly AnyEvent[]): V1MapContext {
  return {
    ...base,
    outputs: new Map(),
    finished: new Set(events.flatMap((e) => (e.type === 'tool_result' ? [e.data.call_id] : []))),
  }
}

/**
 * `_chimera/session/replay`: the retained updates after the cursor, up to what the pump has
 * written, all sent before it resolves. Run it in the attachment's write chain (the pump holds
 * still meanwhile and goes on after them, so nothing is missed or doubled). Bounded like the
 * seed `session/resume` (history.ts).
 */
export async function replaySince(att: Attachment, cursor: number, send: (u: V1Update) => Promise<void>) {
  await att.session.flush()
  const all: { eventId: number; update: V1Update }[] = []
  const events = (await att.session.events(0)).filter((e) => e.seq <= att.upTo)
  // Its own progress state: the live pump's is not touched by a replay.
  const map = replayMap(att.map, events)
  for (const e of events) for (const update of toV1Updates(e, map)) all.push({ eventId: e.seq, update })
  const w = replayWindow(all, cursor, historySize())
  for (const u of w.replay) await send(u.update)
  return {
    sessionId: att.session.id,
    replayed: w.replay.length,
    lastEventId: w.lastEventId,
    truncated: w.truncated,
  }
}
