/**
 * Runs an abstract scenario's steps on one adapter. Observations are logged in arrival order;
 * each expect step looks forward from its own cursor (text, tool calls, tool results,
 * permissions, turn ends), so steps about different things do not consume each other's
 * observations. Ordering rules that hold on every wire are checked here: nothing of a turn
 * (text, tool traffic, permissions) may arrive after that turn ended.
 */
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { match, describeMismatches } from '../../harness/matcher.ts'
import type { AbstractStep, Scenario } from '../corpus/scenario.ts'
import { renderPrompt } from '../profiles/profile.ts'
import { Unsupported, type Adapter, type AdapterContext, type Observation } from '../adapters/types.ts'

export class StepFailure extends Error {
  override name = 'StepFailure'
  readonly line: number | undefined
  constructor(line: number | undefined, message: string) {
    super(message)
    this.line = line
  }
}

const CONTENT = new Set(['text', 'thought', 'tool_call', 'tool_result', 'permission', 'client_request'])
/** How long to keep listening after a turn ended for chunks that arrive late. */
const LATE_GRACE_MS = 400

interface SessionState {
  openTurns: number
  turnStart: number
  /** Seq of the last turn end a step consumed (expectIdle looks after it). */
  lastTurnEnd: number
  cursor: Record<'tool_call' | 'tool_result' | 'permission' | 'turn_end' | 'replay' | 'client_request', number>
  /** Tool results a step already matched (by seq). */
  used: Set<number>
}

const show = (v: unknown): string => JSON.stringify(v)?.slice(0, 200) ?? String(v)

export class ScenarioRun {
  readonly #a: Adapter
  readonly #ctx: AdapterContext
  readonly #log: Observation[] = []
  readonly #sessions = new Map<string, SessionState>()
  readonly #aliases = new Map<string, string>()
  readonly #marks = new Map<string, number>()

  constructor(adapter: Adapter, ctx: AdapterContext) {
    this.#a = adapter
    this.#ctx = ctx
  }

  get log(): readonly Observation[] {
    return this.#log
  }

  #state(session: string): SessionState {
    let s = this.#sessions.get(session)
    if (!s) {
      s = {
        openTurns: 0,
        turnStart: 0,
        lastTurnEnd: -1,
        cursor: { tool_call: 0, tool_result: 0, permission: 0, turn_end: 0, replay: 0, client_request: 0 },
        used: new Set(),
      }
      this.#sessions.set(session, s)
    }
    return s
  }

  /** Pull one observation (or none within `ms`) into the log. */
  async #pull(ms: number): Promise<Observation | undefined> {
    const o = await this.#a.next(Math.max(1, ms))
    if (!o) return undefined
    o.seq = this.#log.length
    const st = this.#state(o.session)
    if (!o.replay && CONTENT.has(o.kind) && st.openTurns === 0) o.late = true
    if (o.kind === 'turn_end' && !o.replay) st.openTurns = Math.max(0, st.openTurns - 1)
    this.#log.push(o)
    return o
  }

  /** The first logged observation at or after `from` passing `pred`, pulling more until `deadline`. */
  async #find(from: number, pred: (o: Observation) => boolean, deadline: number): Promise<Observation | undefined> {
    for (let i = from; ; i++) {
      while (i >= this.#log.length) {
        // Nothing within the wait (or the peer's output ended): give up.
        if (!(await this.#pull(deadline - Date.now()))) return undefined
      }
      if (pred(this.#log[i]!)) return this.#log[i]
    }
  }

  /** Keep pulling until `ms` pass with nothing new. */
  async #drain(ms: number): Promise<void> {
    while (await this.#pull(ms));
  }

  /** Open a session before the steps run (the runner checks capabilities after the handshake). */
  open(session: string): Promise<void> {
    return this.#opened(session)
  }

  async #opened(session: string): Promise<void> {
    if (this.#sessions.has(session)) return
    this.#state(session)
    await this.#a.open(session)
  }

  #resolveMark(v: string | number, line: number | undefined): number {
    if (typeof v === 'number') return v
    const n = this.#marks.get(v)
    if (n === undefined) throw new StepFailure(line, `no mark named ${v}`)
    return n
  }

  #liveIds(session: string): { id: number; wireType: string }[] {
    return this.#log
      .filter((o) => o.session === session && !o.replay && o.eventId !== undefined)
      .map((o) => ({ id: o.eventId!, wireType: o.wireType }))
  }

  async run(s: Scenario): Promise<void> {
    for (const step of s.steps) {
      if ('only' in step && step.only && !step.only.includes(this.#a.transport)) continue
      try {
        await this.#step(step)
      } catch (e) {
        if (e instanceof StepFailure) throw e
        if (e instanceof Unsupported)
          throw new StepFailure(step.line, `not supported on ${this.#a.transport}: ${e.message}`)
        throw new StepFailure(step.line, (e as Error).message)
      }
    }
    // Whatever the steps looked at, nothing of a turn may arrive after it ended.
    await this.#drain(50)
    const late = this.#log.find((o) => o.late)
    if (late) throw new StepFailure(undefined, `${late.wireType} arrived after its turn had ended: ${show(late.frame)}`)
  }

  async #step(step: AbstractStep): Promise<void> {
    const line = step.line
    const session = 'session' in step && step.session ? step.session : 'main'
    // A step's own `within` never shortens the run's --timeout; the first answer of a freshly
    // started target also gets the start-up grace.
    const own = 'within' in step && step.within ? Math.max(step.within, this.#ctx.timeoutMs) : this.#ctx.timeoutMs
    const wait = own + (this.#log.length === 0 ? this.#ctx.startupGraceMs : 0)
    const deadline = Date.now() + wait
    if ('note' in step && Object.keys(step).every((k) => k === 'note' || k === 'line')) return
    if ('openSession' in step) return this.#opened(session)
    if ('prompt' in step) {
      await this.#opened(session)
      const st = this.#state(session)
      st.turnStart = this.#log.length
      st.openTurns++
      return this.#a.prompt(session, renderPrompt(step.prompt, this.#ctx.profile, this.#ctx.workspace))
    }
    const st = this.#state(session)
    if ('expectText' in step || 'expectThought' in step) {
      const kind = 'expectText' in step ? 'text' : 'thought'
      const want = 'expectText' in step ? step.expectText : step.expectThought
      let acc = ''
      let usedLate = false
      let endedAt: number | undefined
      for (let i = st.turnStart; ; i++) {
        while (i >= this.#log.length) {
          const limit = endedAt !== undefined ? Math.min(deadline, endedAt + LATE_GRACE_MS) : deadline
          const got = await this.#pull(limit - Date.now())
          if (!got) {
            const why = endedAt !== undefined ? 'the turn ended first' : `nothing more arrived within ${wait} ms`
            throw new StepFailure(line, `expected ${kind} ${show(want)}, got ${show(acc)} (${why})`)
          }
        }
        const o = this.#log[i]!
        if (o.session !== session || o.replay) continue
        if (o.kind === 'turn_end' && endedAt === undefined && o.seq! >= st.turnStart) endedAt = Date.now()
        if (o.kind !== kind) continue
        acc += o.text ?? ''
        usedLate ||= o.late === true
        const done = typeof want === 'string' ? acc === want : match(want, acc).length === 0
        if (done) {
          if (usedLate)
            throw new StepFailure(
              line,
              `${kind} ${show(want)} was complete only after the turn had ended (updates must precede the turn's end)`,
            )
          return
        }
        if (typeof want === 'string' && !want.startsWith(acc))
          throw new StepFailure(line, `expected ${kind} ${show(want)}, got ${show(acc)}`)
      }
    }
    if ('expectToolCall' in step || 'expectPermission' in step) {
      const kind = 'expectToolCall' in step ? 'tool_call' : 'permission'
      const want = 'expectToolCall' in step ? step.expectToolCall : step.expectPermission
      const o = await this.#find(
        st.cursor[kind],
        (x) => x.session === session && x.kind === kind && !x.replay,
        deadline,
      )
      if (!o)
        throw new StepFailure(
          line,
          `expected a ${kind === 'tool_call' ? 'tool call' : 'permission request'} (${want.action}) within ${wait} ms; none came`,
        )
      st.cursor[kind] = o.seq! + 1
      if (o.action !== want.action)
        throw new StepFailure(
          line,
          `expected a ${want.action} ${kind === 'tool_call' ? 'tool call' : 'permission request'}, got tool ${show(o.tool)} (${o.action ?? 'no known action'})`,
        )
      if ('expectToolCall' in step && step.expectToolCall.args && o.args !== undefined) {
        const ms = match(step.expectToolCall.args, o.args)
        if (ms.length) throw new StepFailure(line, `tool call arguments ${show(o.args)}:\n${describeMismatches(ms)}`)
      }
      if (o.late) throw new StepFailure(line, `the ${kind} arrived after its turn had ended`)
      if ('as' in step && step.as) this.#aliases.set(step.as, (kind === 'tool_call' ? o.callId : o.requestId) ?? '')
      return
    }
    if ('expectToolResult' in step) {
      const want = step.expectToolResult
      const callId = want.call ? this.#aliases.get(want.call) : undefined
      if (want.call && callId === undefined) throw new StepFailure(line, `no tool call named ${want.call}`)
      // A named call's result may come before an earlier call's (calls of one step can run
      // concurrently): look for it from the turn's start; an unnamed one takes the next in order.
      const from = callId === undefined ? st.cursor.tool_result : st.turnStart
      const o = await this.#find(
        from,
        (x) =>
          x.session === session &&
          x.kind === 'tool_result' &&
          !x.replay &&
          (callId === undefined ? !st.used.has(x.seq!) : x.callId === callId),
        deadline,
      )
      if (!o)
        throw new StepFailure(
          line,
          `expected a tool result${want.call ? ` for ${want.call}` : ''} within ${wait} ms; none came`,
        )
      st.used.add(o.seq!)
      if (callId === undefined) st.cursor.tool_result = o.seq! + 1
      if (o.ok !== want.ok)
        throw new StepFailure(
          line,
          `expected the tool to ${want.ok ? 'succeed' : 'fail'}, it ${o.ok ? 'succeeded' : 'failed'}: ${show(o.output)}`,
        )
      if (want.output !== undefined) {
        const ms =
          typeof want.output === 'string'
            ? o.output === want.output
              ? []
              : [{ path: '$', reason: `expected ${show(want.output)}, got ${show(o.output)}` }]
            : match(want.output, o.output)
        if (ms.length) throw new StepFailure(line, `tool output:\n${describeMismatches(ms)}`)
      }
      if (o.late) throw new StepFailure(line, 'the tool result arrived after its turn had ended')
      return
    }
    if ('answerPermission' in step) {
      const ref = step.answerPermission.request
      const id = ref
        ? this.#aliases.get(ref)
        : [...this.#log].reverse().find((o) => o.session === session && o.kind === 'permission')?.requestId
      if (!id) throw new StepFailure(line, `no permission request ${ref ?? 'seen yet'}`)
      return this.#a.answer(session, id, step.answerPermission.decision)
    }
    if ('expectClientRequest' in step) {
      const want = step.expectClientRequest
      const o = await this.#find(
        st.cursor.client_request,
        (x) =>
          x.session === session &&
          x.kind === 'client_request' &&
          x.wireType === want.method &&
          (want.path === undefined || x.text === want.path),
        deadline,
      )
      if (!o)
        throw new StepFailure(
          line,
          `expected the agent to ask the client ${want.method}${want.path ? ` for ${want.path}` : ''} within ${wait} ms; it did not`,
        )
      st.cursor.client_request = o.seq! + 1
      if (o.late) throw new StepFailure(line, `${want.method} arrived after its turn had ended`)
      return
    }
    if ('cancel' in step) return this.#a.cancel(session)
    if ('steer' in step) return this.#a.steer(session, step.steer)
    if ('expectTurnEnd' in step) {
      const o = await this.#find(
        st.cursor.turn_end,
        (x) => x.session === session && x.kind === 'turn_end' && !x.replay,
        deadline,
      )
      if (!o)
        throw new StepFailure(line, `expected the turn to end (${step.expectTurnEnd}) within ${wait} ms; it did not`)
      st.cursor.turn_end = o.seq! + 1
      st.lastTurnEnd = o.seq!
      if (o.outcome !== step.expectTurnEnd)
        throw new StepFailure(
          line,
          `expected the turn to end ${step.expectTurnEnd}, it ended ${o.outcome} (${o.wireType}${o.output ? `: ${o.output.slice(0, 200)}` : ''})`,
        )
      return
    }
    if ('expectIdle' in step) {
      const start = this.#log.length
      await this.#drain(step.expectIdle.ms)
      // New turn traffic during the window, or anything that came after the last turn ended.
      const extra = this.#log.find(
        (o) =>
          o.session === session &&
          !o.replay &&
          (CONTENT.has(o.kind) || o.kind === 'turn_end') &&
          ((o.seq! >= start && (o.kind !== 'turn_end' || o.seq! >= st.cursor.turn_end)) ||
            (o.late && o.seq! > st.lastTurnEnd)),
      )
      if (extra) throw new StepFailure(line, `expected nothing more, received ${extra.wireType}: ${show(extra.frame)}`)
      return
    }
    if ('mark' in step) {
      const ids = this.#liveIds(session)
      if (!ids.length) throw new StepFailure(line, `${this.#a.transport} showed no event ids to mark`)
      this.#marks.set(step.mark, ids[ids.length - 1]!.id)
      return
    }
    if ('resume' in step) {
      st.cursor.replay = this.#log.length
      return this.#a.resume(session, this.#resolveMark(step.resume.after, line))
    }
    if ('expectReplay' in step) {
      const after = this.#resolveMark(step.expectReplay.after, line)
      const live = this.#liveIds(session)
      const lastLive = live.length ? live[live.length - 1]!.id : 0
      const got = await this.#collectReplay(session, st.cursor.replay, lastLive, deadline)
      const ids = got.map((o) => o.eventId)
      if (ids.some((i) => i === undefined)) throw new StepFailure(line, 'a replayed event carries no event id')
      const early = got.filter((o) => o.eventId! <= after)
      if (early.length)
        throw new StepFailure(
          line,
          `replayed event ${early[0]!.eventId} is not after ${after}: the replay must start after the given id (replayed ${show(ids)})`,
        )
      const expected = live.filter((x) => x.id > after)
      if (step.expectReplay.check === 'starts-after') {
        if (expected.length && !got.length)
          throw new StepFailure(
            line,
            `nothing was replayed after ${after}; expected ${show(expected.map((x) => x.id))}`,
          )
        return
      }
      const wantIds = expected.map((x) => x.id)
      if (show(ids) !== show(wantIds))
        throw new StepFailure(
          line,
          `replayed ids ${show(ids)}, expected exactly ${show(wantIds)} (in order, each once)`,
        )
      const byId = new Map(expected.map((x) => [x.id, x.wireType]))
      const odd = got.find((o) => byId.get(o.eventId!) !== o.wireType)
      if (odd)
        throw new StepFailure(
          line,
          `replayed event ${odd.eventId} is ${odd.wireType}, live it was ${byId.get(odd.eventId!)}`,
        )
      return
    }
    if ('expectNoEventLost' in step) return this.#noEventLost(session, line, deadline)
    if ('expectFile' in step) {
      const p = resolve(this.#ctx.workspace, step.expectFile.path)
      if (step.expectFile.absent) {
        if (existsSync(p)) throw new StepFailure(line, `${step.expectFile.path} exists, expected it absent`)
        return
      }
      if (!existsSync(p)) throw new StepFailure(line, `${step.expectFile.path} does not exist`)
      const content = readFileSync(p, 'utf8')
      const want = step.expectFile.content
      if (want !== undefined && (typeof want === 'string' ? content !== want : match(want, content).length))
        throw new StepFailure(line, `${step.expectFile.path} holds ${show(content)}, expected ${show(want)}`)
      return
    }
    throw new StepFailure(line, `unknown step ${show(step)}`)
  }

  /** Replayed observations since `from`: until the wire says the replay ended, or the live tail was reached and things went quiet. */
  async #collectReplay(session: string, from: number, lastLive: number, deadline: number): Promise<Observation[]> {
    for (let i = from; ;) {
      while (i < this.#log.length) {
        const o = this.#log[i++]!
        if (o.session === session && o.kind === 'replay_end')
          return this.#log.slice(from, i).filter((x) => x.session === session && x.replay && x.kind !== 'replay_end')
      }
      const got = this.#log.slice(from).filter((x) => x.session === session && x.replay && x.eventId !== undefined)
      const reached = got.some((x) => x.eventId! >= lastLive)
      const more = await this.#pull(reached ? 300 : deadline - Date.now())
      if (!more)
        return this.#log.slice(from).filter((x) => x.session === session && x.replay && x.kind !== 'replay_end')
    }
  }

  async #noEventLost(session: string, line: number | undefined, deadline: number): Promise<void> {
    const live = this.#liveIds(session)
    for (let i = 1; i < live.length; i++) {
      if (live[i]!.id <= live[i - 1]!.id)
        throw new StepFailure(
          line,
          `event ids went ${live[i - 1]!.id} then ${live[i]!.id}: ids must strictly increase (a repeat or a reorder)`,
        )
    }
    if (!live.length || !this.#a.capabilities().has('resume')) return
    // Replay the whole session and compare: every stored event the live stream carried must be
    // there under the same id, and the live stream must not have skipped a stored event.
    const st = this.#state(session)
    st.cursor.replay = this.#log.length
    await this.#a.resume(session, 0)
    const got = await this.#collectReplay(session, st.cursor.replay, live[live.length - 1]!.id, deadline)
    const replayed = got.filter((o) => o.eventId !== undefined).map((o) => ({ id: o.eventId!, wireType: o.wireType }))
    const first = live[0]!.id
    const last = live[live.length - 1]!.id
    const window = replayed.filter((x) => x.id >= first && x.id <= last)
    const missing = window.filter((x) => !live.some((l) => l.id === x.id))
    if (missing.length)
      throw new StepFailure(
        line,
        `the live stream skipped stored event(s) ${show(missing.map((m) => `${m.id}:${m.wireType}`))}`,
      )
    const lost = live.filter((l) => !replayed.some((x) => x.id === l.id && x.wireType === l.wireType))
    if (lost.length)
      throw new StepFailure(
        line,
        `event(s) seen live are not in the replay: ${show(lost.map((m) => `${m.id}:${m.wireType}`))}`,
      )
  }
}
