/**
 * The two event streams (specs/asyncapi/sse.asyncapi.yaml): `GET /sessions/{id}/events` (a
 * persisted session is loaded so it can stream; ends with `end` after a turn's terminal event)
 * and `GET /session/{id}/events` (live sessions; open across turns; with several instances over one
 * store, any stored session, since it may be live on another instance). Both start after the
 * cursor resume.ts computes, read the session through `Session.stream` (gap-free catch-up then
 * live), and end with `end` when the session leaves the manager or the server stops. A stream past
 * the limits (per session, per token, in all: sse/registry.ts) is `429 too_many_streams`.
 */
import type { SseEnd } from '../../../generated/schemas.gen.ts'
import { TERMINAL_EVENTS, type AnyEvent } from '../../events/event-types.ts'
import type { Session } from '../../core/session.ts'
import type { OperationHandlers } from '../app.ts'
import { bearerToken, tokenMatches } from '../auth.ts'
import { anySession, liveSession, type HttpDeps } from '../deps.ts'
import { HttpError } from '../errors.ts'
import type { StreamHolder } from '../sse/registry.ts'
import type { SseRecord } from '../sse/format.ts'
import { pluralRecord, pluralStored, singularRecord, singularStored, type StoredEncoder } from '../sse/event-map.ts'
import { startCursor } from '../sse/resume.ts'
import { sseResponse, type SseStreamOptions } from '../sse/sse-stream.ts'
import { nodeResponse, nodeWrites } from '../sse/node-writes.ts'

/**
 * The plural stream's end rule: after a terminal event, once the stream has caught up with the
 * log and no turn has started since (so a replayed multi-turn history is sent whole, and a live
 * turn ends the stream with its own terminal event).
 */
export function pluralEndRule(
  session: Pick<Session, 'id' | 'lastSeq' | 'status' | 'idle'>,
): (e: AnyEvent) => { end: SseEnd; ready?: Promise<boolean> } | undefined {
  let turnOpen = false
  let terminal: SseEnd | undefined
  return (e) => {
    if (e.type === 'user_message' || e.type === 'turn_start') turnOpen = true
    if (TERMINAL_EVENTS.has(e.type)) {
      turnOpen = false
      terminal = { session_id: session.id, success: e.type === 'agent_result' ? e.data.success : false }
    }
    if (!terminal || turnOpen || e.seq < session.lastSeq) return undefined
    // A turn accepted but not yet started (its user_message still to come) keeps the session
    // running: end only once it settles with nothing written after this event.
    if (session.status !== 'running') return { end: terminal }
    const seq = e.seq
    return { end: terminal, ready: session.idle().then(() => session.lastSeq <= seq) }
  }
}

/** Who opens the stream, for the stream limits (sse/registry.ts). */
function holder(deps: HttpDeps, req: Request): StreamHolder {
  const token = bearerToken(req)
  if (deps.masterToken !== undefined && tokenMatches(token, deps.masterToken)) return { master: true }
  return token === undefined ? { master: false } : { master: false, token }
}

/** A stream's response, registered under the stream limits (429 past them). */
function open(
  deps: HttpDeps,
  req: Request,
  o: Omit<SseStreamOptions, 'stop' | 'settings' | 'logger' | 'onClose' | 'written'>,
): Response {
  const reg = deps.streams.register(o.sessionId, holder(deps, req))
  if ('refused' in reg)
    throw new HttpError('too_many_streams', `${reg.refused}; close one, or retry later`, {
      headers: { 'retry-after': '5' },
    })
  const res = nodeResponse(req)
  return sseResponse({
    ...o,
    stop: reg.signal,
    settings: deps.sse,
    logger: deps.logger,
    onClose: reg.release,
    ...(res ? { written: nodeWrites(res) } : {}),
  })
}

/**
 * Records arrive faster than the turn's last bookkeeping (file snapshot, summary): hold a
 * terminal record until the session has finished its turn — and, when the turn is over already,
 * until its summary is written (it is written shortly after the turn's end), so a client that saw
 * the turn end finds it in any instance's listing.
 */
const settleOf =
  (session: () => Pick<Session, 'status' | 'idle' | 'summarySettled'> | undefined) =>
  (e: AnyEvent): Promise<unknown> | undefined => {
    const s = session()
    if (!s || !TERMINAL_EVENTS.has(e.type)) return undefined
    return s.status === 'running' ? s.idle() : s.summarySettled()
  }

function stream(
  deps: HttpDeps,
  req: Request,
  session: Session,
  afterSeq: number,
  record: (e: AnyEvent) => SseRecord,
  encodeStored: StoredEncoder,
  endAfter?: ReturnType<typeof pluralEndRule>,
): Response {
  return open(deps, req, {
    sessionId: session.id,
    afterSeq,
    events: (after, signal) => session.stream({ afterSeq: after, signal }),
    record,
    // What is stored before the last event goes out as stored; the last (and what follows) as
    // events, so the end rule and `settle` see the turn that is finishing.
    stored: {
      page: (after) => session.storedPage(after, session.lastSeq - 1),
      encode: encodeStored,
    },
    // The manager's copy: a reload replaces the one this stream was opened on (it reads the store and goes on).
    settle: settleOf(() => deps.manager.peek(session.id) ?? session),
    endAfter,
  })
}

/** Sessions whose segment a vouched stream is reading now. */
const vouchedReads = new Set<string>()

/**
 * The plural stream of a session this instance does not hold (docs/decisions/0392-vouched-segment.md):
 * the records the store vouches for without opening it go out first, as stored; the session is
 * loaded only if the stream goes on past them (more records, a turn left open, or the session
 * came alive meanwhile). A stored session whose last turn ended is replayed and ended without
 * being loaded. Undefined when the store cannot vouch for the records after the cursor.
 */
async function vouchedStream(
  deps: HttpDeps,
  req: Request,
  id: string,
  fromLive: boolean,
): Promise<Response | undefined> {
  const store = deps.manager.store
  if (!store.readVouched || deps.manager.shared || deps.manager.peek(id)) return undefined
  // One vouched read per session at a time: a second stream of it (or a flood) takes the loading
  // path, which shares the session in memory, instead of holding a copy of the segment each.
  if (deps.streams.count(id) > 0 || vouchedReads.has(id)) return undefined
  vouchedReads.add(id)
  let v: Awaited<ReturnType<NonNullable<typeof store.readVouched>>>
  try {
    v = await store.readVouched(id)
  } finally {
    vouchedReads.delete(id)
  }
  if (!v) return undefined
  const after = startCursor(req.headers.get('last-event-id'), fromLive, v.lines)
  if (after >= v.lines) return undefined
  let live: Session | undefined
  // The end rule over the stored records, then over the session once it is loaded — here by this
  // stream or by another request meanwhile (a replay beside this one): the rule then ends the
  // stream after the last stored record only if the session has written nothing after it.
  const current = (): Session | undefined => live ?? deps.manager.peek(id)
  const view = {
    id,
    get lastSeq(): number {
      return current()?.lastSeq ?? v.lines
    },
    get status(): Session['status'] {
      return current()?.status ?? 'idle'
    },
    idle: (): Promise<void> => current()?.idle() ?? Promise.resolve(),
  }
  return open(deps, req, {
    sessionId: id,
    afterSeq: after,
    events: async function* (from, signal) {
      live = deps.manager.peek(id) ?? (await anySession(deps, id))
      yield* live.stream({ afterSeq: from, signal })
    },
    record: pluralRecord,
    stored: {
      page: async (from) => v.page(from),
      encode: pluralStored,
      // Nothing after the last vouched record in the segment: the end rule decides (with the
      // session's own counter and status when it is live here).
      final: (seq) => seq === v.lines && !v.more,
    },
    settle: settleOf(() => live),
    endAfter: pluralEndRule(view),
  })
}

type Handlers = Pick<OperationHandlers, 'sessions.streamEvents' | 'session.streamEvents'>

export function eventsHandlers(deps: HttpDeps): Handlers {
  return {
    'sessions.streamEvents': async ({ path, query, req }) => {
      const vouched = await vouchedStream(deps, req, path.id, query.from === 'live')
      if (vouched) return vouched
      const session = await anySession(deps, path.id)
      const after = startCursor(req.headers.get('last-event-id'), query.from === 'live', session.lastSeq)
      return stream(deps, req, session, after, pluralRecord, pluralStored, pluralEndRule(session))
    },
    'session.streamEvents': async ({ path, req }) => {
      // With a shared store the session may run on another instance: read from the store here.
      const session = await liveSession(deps, path.id)
      const after = startCursor(req.headers.get('last-event-id'), false, session.lastSeq)
      return stream(deps, req, session, after, singularRecord, singularStored)
    },
  }
}
