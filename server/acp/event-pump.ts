/**
 * One session's events written to one ACP connection, in order, one at a time, from the
 * session's gap-free stream (`session.stream({afterSeq, signal})`): a client that stops
 * reading holds the pump (bounded memory; the store keeps everything). `delivered(seq)` lets a
 * response wait until the events it follows are on the wire (the prompt's updates before its
 * `stopReason`).
 */
import type { Session } from '../core/session.ts'
import type { AnyEvent } from '../events/event-types.ts'
import type { Logger } from '../log.ts'

export class EventPump {
  readonly #stop = new AbortController()
  readonly #done: Promise<void>
  #written: number
  #waiters: { seq: number; resolve: () => void }[] = []

  constructor(session: Session, afterSeq: number, write: (e: AnyEvent) => Promise<void>, logger: Logger) {
    this.#written = afterSeq
    this.#done = (async () => {
      for await (const e of session.stream({ afterSeq, signal: this.#stop.signal })) {
        await write(e)
        this.#written = e.seq
        if (this.#waiters.length)
          this.#waiters = this.#waiters.filter((w) => (w.seq <= e.seq ? (w.resolve(), false) : true))
      }
    })()
      .catch((err: unknown) => {
        if (!this.#stop.signal.aborted) logger.error(`event stream of ${session.id} failed`, err)
      })
      .finally(() => {
        for (const w of this.#waiters.splice(0)) w.resolve()
      })
  }

  /** The last event seq written. */
  get written(): number {
    return this.#written
  }

  /** Resolves once every event up to `seq` has been written (or the pump stopped). */
  delivered(seq: number): Promise<void> {
    if (this.#written >= seq || this.#stop.signal.aborted) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push({ seq, resolve }))
  }

  async stop(): Promise<void> {
    this.#stop.abort()
    for (const w of this.#waiters.splice(0)) w.resolve()
    await this.#done
  }
}

/** Copies of one session `endAttachments` follows at most (each replaced the one before). */
const MAX_COPIES = 4

/**
 * The connection's input ended: nobody can answer permission requests any more, so sessions
 * that would ask stop asking; then each session's running turn finishes, its last events are
 * written to the client, and its pump stops. `after` runs per session once its pump stopped.
 * `current` names the copy that runs the session now (the manager's: an attached copy may have
 * been replaced by a fresh load since, see SessionManager.takeOver); absent, the attached one.
 * `detach` (a network connection, DialectContext.detach): the sessions go on untouched and
 * each pump stops at once; a client that comes back replays with `session/load`.
 */
export async function endAttachments<A extends { session: Session; pump: EventPump }>(
  attached: Iterable<A>,
  o: { after?: (a: A) => void; detach?: boolean; current?: (s: Session) => Session } = {},
): Promise<void> {
  const all = [...attached]
  if (o.detach) {
    await Promise.all(all.map(async (a) => (await a.pump.stop(), o.after?.(a))))
    return
  }
  const now = (a: A) => o.current?.(a.session) ?? a.session
  const told = new WeakSet<Session>()
  // Each copy that runs the session is told once, as it is met: one that replaces it later too.
  const tell = (s: Session): Session => {
    if (!told.has(s) && (s.approval === 'ask' || s.approval === 'auto'))
      s.stopAsking('the ACP client went away: input ended', 'end-of-input')
    told.add(s)
    return s
  }
  for (const a of all) tell(now(a))
  await Promise.all(
    all.map(async (a) => {
      // Again after each wait: a copy can be replaced while an earlier one finishes (bounded).
      // What the client is owed is what the last copy waited for had written.
      let s = now(a)
      for (let round = 1; ; round++) {
        await s.idle()
        await s.flush()
        const next = tell(now(a))
        if (next === s || round >= MAX_COPIES) break
        s = next
      }
      await a.pump.delivered(s.lastSeq)
      await a.pump.stop()
      o.after?.(a)
    }),
  )
}
