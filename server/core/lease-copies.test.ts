/**
 * The session manager's copies of a session under leases (docs/scale-out.md): a copy that lost
 * the lease writes no more summaries, instances sharing a store write a turn's summary as the
 * turn ends (no delay: another instance lists the session), and a take-over does not replace a
 * copy loaded while this instance held the lease that is running what it took.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileEventStore } from '../store/file-store.ts'
import { eventlogRoot } from '../store/paths.ts'
import { TERMINAL_EVENTS, type AnyEvent } from '../events/event-types.ts'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { LoadedSession, QueuedPrompt } from '../store/types.ts'
import { testEnv, until, type TestEnv } from './fixtures/harness.ts'
import { heldLeases } from './fixtures/held-leases.ts'
import { TAKEN_OVER } from './manager.ts'
import { ModelRegistry } from './model-registry.ts'
import { OfflineProvider } from '../providers/offline.ts'
import { Gate, ScriptedProvider } from './fixtures/scripted-provider.ts'
import { LspManager } from '../lsp/manager.ts'
import { LspServers } from '../lsp/servers.ts'
import type { LspFactory } from '../lsp/provider.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-lease-copies-')
})
afterEach(async () => {
  await env.cleanup()
})

/**
 * A file store that records each summary write (the event count it covers) and resolves
 * `terminal` once the append carrying a turn's terminal event has returned to the session.
 */
class WatchedStore extends FileEventStore {
  readonly summaries: number[] = []
  #terminal!: () => void
  terminal = new Promise<void>((r) => (this.#terminal = r))

  override async writeSummary(id: string, summary: SessionSummary): Promise<void> {
    this.summaries.push(summary.event_count ?? 0)
    return super.writeSummary(id, summary)
  }
  override async append(e: AnyEvent): Promise<void> {
    await super.append(e)
    if (TERMINAL_EVENTS.has(e.type)) this.#terminal()
  }
  override async appendMany(events: readonly AnyEvent[]): Promise<void> {
    await super.appendMany(events)
    if (events.some((e) => TERMINAL_EVENTS.has(e.type))) this.#terminal()
  }
}

/** A file store whose loads wait for `openLoad()` once they have read the session (`readDone`). */
class HeldLoadStore extends FileEventStore {
  loads = 0
  readDone = false
  openLoad!: () => void
  readonly #gate = new Promise<void>((r) => (this.openLoad = r))

  override async load(id: string): Promise<LoadedSession | undefined> {
    this.loads++
    const loaded = await super.load(id)
    this.readDone = true
    await this.#gate
    return loaded
  }
}

/** A file store that counts its loads. */
class CountingStore extends FileEventStore {
  loads = 0
  override async load(id: string): Promise<LoadedSession | undefined> {
    this.loads++
    return super.load(id)
  }
}

/** A file store whose next load fails (`failNext`) and whose queue-entry writes wait for `openQueue()` once `holdQueue` is set. */
class FaultyStore extends CountingStore {
  failNext = false
  holdQueue = false
  queueHeld = false
  openQueue!: () => void
  readonly #queueGate = new Promise<void>((r) => (this.openQueue = r))

  override async load(id: string): Promise<LoadedSession | undefined> {
    if (this.failNext) {
      this.failNext = false
      throw new Error('load failed')
    }
    return super.load(id)
  }
  override async queuePrompt(id: string, prompt: QueuedPrompt): Promise<void> {
    if (this.holdQueue) {
      this.queueHeld = true
      await this.#queueGate
    }
    return super.queuePrompt(id, prompt)
  }
}

/**
 * The offline model behind a gate: a call whose newest user message has a `!hold` line waits for
 * `gate` (its cancel ends the wait, unless `deaf`: a tool that goes on after its cancel), then
 * plays the message's directives. `prompts` lists each call's newest user message.
 */
function gatedModels(deaf = false): { models: ModelRegistry; gate: Gate; prompts: string[] } {
  const offline = new OfflineProvider()
  const gate = new Gate()
  const prompts: string[] = []
  const provider = new ScriptedProvider(async function* (req) {
    const user = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? ''
    prompts.push(user)
    if (user.split('\n').includes('!hold')) await gate.wait(deaf ? new AbortController().signal : req.signal)
    yield* offline.stream({ ...req, model: 'offline' })
  }, 'gated')
  return { models: new ModelRegistry([offline, provider]), gate, prompts }
}

/** A session on `store` (held leases, the gated model) whose first turn, `!hold`, is running and held. */
async function heldTurn(store: FileEventStore, o: { deaf?: boolean; staleSettleMs?: number } = {}) {
  const leases = heldLeases()
  const { models, gate, prompts } = gatedModels(o.deaf)
  const m = env.manager({
    store,
    leases,
    models,
    model: 'gated',
    ...(o.staleSettleMs !== undefined ? { staleSettleMs: o.staleSettleMs } : {}),
  })
  const s = await m.create()
  const running = s.prompt('!hold\n!say one')
  await until(() => prompts.length === 1, 5000, 'the turn to call the model')
  return { leases, gate, prompts, m, s, running }
}

/** Lets queued microtasks run (no timer can fire meanwhile: that needs a turn of the event loop). */
async function microtasks(n = 1000): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve()
}

describe('summaries of a copy under leases', () => {
  it('instances sharing a store begin the summary of a turn as it ends; one instance alone waits', async () => {
    for (const shared of [true, false]) {
      const store = new WatchedStore({ root: eventlogRoot(env.home) })
      const m = env.manager({ store, ...(shared ? { leases: heldLeases() } : {}) })
      const s = await m.create()
      void s.prompt('!say hi')
      await store.terminal
      // The terminal event is back from the store: its summary write is begun by now when shared
      // (in the same chain of promises), and not before the delay's timer otherwise.
      await microtasks()
      expect(store.summaries.includes(s.lastSeq), `shared: ${shared}`).toBe(shared)
      await s.idle()
      expect(store.summaries).toContain(s.lastSeq)
      await store.close()
    }
  })

  it('a copy whose lease was lost writes no summary of the turn it had ended', async () => {
    const store = new WatchedStore({ root: eventlogRoot(env.home) })
    const m = env.manager({ store })
    const s = await m.create()
    void s.prompt('!say hi')
    await store.terminal
    // Lost before the delayed write is due (no timer has run since the turn ended).
    m.leaseLost(s.id)
    expect(m.peek(s.id)).toBeUndefined()
    await s.flush()
    await s.idle()
    expect(store.summaries.filter((n) => n >= s.lastSeq)).toEqual([])
    await store.close()
  })
})

describe('take-over after a load under way', () => {
  it('keeps a copy loaded while the lease is held that is closing the prompts it took, and closes them once', async () => {
    const root = eventlogRoot(env.home)
    const first = new FileEventStore({ root })
    const made = await env.manager({ store: first }).create()
    // Accepted, never run: the process stopped (its queue entry is all that is left).
    await first.queuePrompt(made.id, { message_id: 'msg-left', text: 'left behind', accepted_at: Date.now(), order: 0 })
    await first.close()
    const length = made.lastSeq

    // Loads wait for `openLoad`; the closing records wait for `openAppend`.
    let openAppend!: () => void
    const appendGate = new Promise<void>((r) => (openAppend = r))
    let appendsHeld = 0
    const store = new (class extends HeldLoadStore {
      override async append(e: AnyEvent): Promise<void> {
        appendsHeld++
        await appendGate
        return super.append(e)
      }
      override async appendMany(events: readonly AnyEvent[]): Promise<void> {
        appendsHeld++
        await appendGate
        return super.appendMany(events)
      }
    })({ root })
    const m = env.manager({ store, leases: heldLeases() })

    const loading = m.get(made.id)
    await until(() => store.loads === 1, 5000, 'the load to begin')
    // The lease was just claimed (a command's claim, or the sweep): take the session over.
    const taking = m.takeOver(made.id, length)
    store.openLoad()
    const copy = await loading
    await until(() => appendsHeld > 0, 5000, 'the closing records to be written')
    expect(copy.status).toBe('running')
    openAppend()
    await taking
    expect(m.peek(made.id)).toBe(copy)
    const events = await store.read(made.id)
    expect(events.filter((e) => e.type === 'user_message')).toHaveLength(1)
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    expect(copy.turnOpen).toBe(false)
    await store.close()
  })

  it('keeps a copy loaded while the lease is held that is still idle as it closes a turn left open, and the next prompt follows its records', async () => {
    const root = eventlogRoot(env.home)
    const first = new FileEventStore({ root })
    const m0 = env.manager({ store: first })
    const made = await m0.create()
    await made.prompt('!say hi').done
    await made.idle()
    const told = await first.read(made.id)
    const said = told.find((e) => e.type === 'user_message')!
    const began = told.find((e) => e.type === 'turn_start')!
    // The previous owner stopped mid-turn, its prompt's queue entry left behind, and another accepted.
    let seq = made.lastSeq
    await first.append({ ...said, seq: ++seq, data: { ...said.data, message_id: 'msg-stale' } } as AnyEvent)
    await first.append({ ...began, seq: ++seq } as AnyEvent)
    await first.queuePrompt(made.id, { message_id: 'msg-stale', text: 'stale', accepted_at: Date.now(), order: 0 })
    await first.queuePrompt(made.id, { message_id: 'msg-left', text: 'left behind', accepted_at: Date.now(), order: 1 })
    m0.closeAll()
    // Its last summary write ends before the store lets the session go (else it takes it again).
    await made.flush()
    await first.close()

    const store = new HeldLoadStore({ root })
    const m = env.manager({ store, leases: heldLeases() })
    const loading = m.get(made.id)
    await until(() => store.loads === 1, 5000, 'the load to begin')
    const taking = m.takeOver(made.id, seq)
    store.openLoad()
    const copy = await loading
    await taking
    expect(store.loads).toBe(1)
    expect(m.peek(made.id)).toBe(copy)
    expect(copy.turnOpen).toBe(false)
    const events = await store.read(made.id)
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    // The open turn closed once, saying it was taken over; the prompt left behind closed once.
    expect(events.filter((e) => e.type === 'error' && e.data.message === TAKEN_OVER)).toHaveLength(1)
    expect(events.filter((e) => e.type === 'user_message' && e.data.message_id === 'msg-left')).toHaveLength(1)
    const next = await copy.prompt('!say again').done
    expect(next.stop_reason).toBe('end_turn')
    await store.close()
  })

  it('replaces a copy whose read began before the claim: it is older than the claim found and took nothing', async () => {
    const root = eventlogRoot(env.home)
    const first = new FileEventStore({ root })
    const m0 = env.manager({ store: first })
    const made = await m0.create()
    await made.prompt('!say hi').done

    const store = new HeldLoadStore({ root })
    const leases = heldLeases()
    let held = false
    leases.holds = () => held
    const m = env.manager({ store, leases })
    // A read (not holding the lease) loads the session as it is now...
    const loading = m.get(made.id)
    await until(() => store.readDone, 5000, 'the session to be read')
    // ...while its owner runs another turn and lets it go; this instance claims it.
    await made.prompt('!say again').done
    await made.idle()
    m0.closeAll()
    await made.flush()
    await first.close()
    const length = made.lastSeq
    held = true
    const taking = m.takeOver(made.id, length)
    store.openLoad()
    const copy = await loading
    await taking
    expect(copy.lastSeq).toBeLessThan(length)
    const current = m.peek(made.id)!
    expect(current).not.toBe(copy)
    expect(current.lastSeq).toBe(length)
    expect((await current.prompt('!say third').done).stop_reason).toBe('end_turn')
    await store.close()
  })
})

describe('a copy that lost its lease', () => {
  it('runs none of its queued prompts: they stay queued in the log, and the instance that runs the session now closes each once', async () => {
    const store = new FileEventStore({ root: eventlogRoot(env.home) })
    const leases = heldLeases()
    const { models, prompts } = gatedModels()
    const m = env.manager({ store, leases, models, model: 'gated' })
    const s = await m.create()
    const running = s.prompt('!hold\n!say one')
    const queued = s.prompt('!say two')
    await queued.accepted
    await until(() => prompts.length === 1, 5000, 'the first turn to call the model')
    leases.hooks!.lost(s.id)
    expect((await running.done).stop_reason).toBe('cancelled')
    expect((await queued.done).stop_reason).toBe('cancelled')
    await s.idle()
    expect(prompts).toEqual(['!hold\n!say one'])
    const stored = await store.load(s.id)
    expect(stored!.queued.map((q) => q.message_id)).toEqual([queued.messageId])
    expect(stored!.events.filter((e) => e.type === 'user_message')).toHaveLength(1)
    // Claimed again (here, standing in for the instance that took it): it closes the prompt, once.
    await m.takeOver(s.id, stored!.events.length)
    const copy = m.peek(s.id)!
    expect(copy).not.toBe(s)
    await copy.idle()
    expect(prompts).toEqual(['!hold\n!say one'])
    const after = (await copy.events(stored!.events.length)).map((e) =>
      e.type === 'user_message' ? `${e.type} ${e.data.message_id}` : e.type,
    )
    expect(after).toEqual([`user_message ${queued.messageId}`, 'turn_start', 'turn_end', 'error'])
    await copy.flush()
    await store.close()
  })

  it('is waited for by a load that will run the session: its last records come before the read', async () => {
    const store = new CountingStore({ root: eventlogRoot(env.home) })
    const { leases, gate, m, s, running } = await heldTurn(store, { deaf: true })
    leases.hooks!.lost(s.id)
    const loads = store.loads
    // Claimed again while the stale copy's turn still runs (its tool ignores the cancel).
    const taking = m.takeOver(s.id, s.lastSeq)
    await microtasks()
    expect(store.loads).toBe(loads)
    gate.open()
    expect((await running.done).stop_reason).toBe('cancelled')
    await taking
    expect(store.loads).toBe(loads + 1)
    const copy = m.peek(s.id)!
    expect(copy).not.toBe(s)
    // The turn was closed once, by the copy that ran it: nothing was left open to take over.
    const terminals = (await copy.events(0)).filter((e) => TERMINAL_EVENTS.has(e.type))
    expect(terminals.map((e) => e.type)).toEqual(['cancelled'])
    expect(JSON.stringify(terminals)).not.toContain(TAKEN_OVER)
    expect((await copy.prompt('!say next').done).stop_reason).toBe('end_turn')
    await copy.flush()
    await store.close()
  })

  it('a take-over of a copy still running here: nobody is handed the copy meanwhile, a get joins the load, and a load that fails leaves no copy behind', async () => {
    const store = new FaultyStore({ root: eventlogRoot(env.home) })
    const { gate, m, s, running } = await heldTurn(store, { deaf: true })
    // Claimed afresh while the copy here still runs (its lease had run out here): it is stopped.
    store.failNext = true
    const failed = m.takeOver(s.id, s.lastSeq).then(
      () => undefined,
      (err: unknown) => err,
    )
    await microtasks()
    expect(m.peek(s.id)).toBeUndefined()
    gate.open()
    expect((await running.done).stop_reason).toBe('cancelled')
    expect(await failed).toMatchObject({ message: 'load failed' })
    expect(m.peek(s.id)).toBeUndefined()
    // The next command loads the session afresh (owned: the lease is held) and runs it.
    const copy = await m.get(s.id)
    expect(copy).not.toBe(s)
    expect((await copy.prompt('!say two').done).stop_reason).toBe('end_turn')
    await copy.flush()
    await store.close()
  })

  it('a get while a take-over waits for the stopping copy joins the load and is handed the new copy', async () => {
    const store = new CountingStore({ root: eventlogRoot(env.home) })
    const { gate, m, s, running } = await heldTurn(store, { deaf: true })
    const taking = m.takeOver(s.id, s.lastSeq)
    await microtasks()
    const got = m.get(s.id)
    gate.open()
    await running.done
    await taking
    const copy = await got
    expect(copy).not.toBe(s)
    expect(copy).toBe(m.peek(s.id))
    await copy.flush()
    await store.close()
  })

  it('a queued prompt whose record was being written when the lease was lost runs and writes nothing', async () => {
    const store = new FaultyStore({ root: eventlogRoot(env.home) })
    const { leases, gate, prompts, s, running: first } = await heldTurn(store)
    store.holdQueue = true
    const second = s.prompt('!say two')
    await until(() => store.queueHeld, 5000, 'the second prompt to be recorded')
    // The first turn ends: the second is next, waiting for its record.
    gate.open()
    expect((await first.done).stop_reason).toBe('end_turn')
    await microtasks()
    leases.hooks!.lost(s.id)
    store.openQueue()
    expect((await second.done).stop_reason).toBe('cancelled')
    await s.idle()
    expect(prompts).toEqual(['!hold\n!say one'])
    const stored = await store.load(s.id)
    expect(stored!.queued.map((q) => q.message_id)).toEqual([second.messageId])
    const turns = stored!.events.filter((e) => e.type === 'user_message').map((e) => e.data.message_id)
    expect(turns).toEqual([first.messageId])
    await store.close()
  })

  it('a steer its cancelled turn never took is left to the instance that runs the session now', async () => {
    const store = new FileEventStore({ root: eventlogRoot(env.home) })
    const { leases, s, running } = await heldTurn(store)
    expect(await s.steer('steer me')).toBe(true)
    const length = (await store.load(s.id))!.events.length
    leases.hooks!.lost(s.id)
    expect((await running.done).stop_reason).toBe('cancelled')
    await s.idle()
    await s.flush()
    const stored = await store.load(s.id)
    // The turn's own end, and nothing closing the steer (no user_message, no turn ending in `error`).
    const after = stored!.events.slice(length).map((e) => e.type)
    expect(after.at(-1)).toBe('cancelled')
    expect(after.filter((t) => t === 'user_message' || t === 'turn_start' || t === 'error')).toEqual([])
    expect(stored!.queued.map((q) => q.text)).toEqual(['steer me'])
    await store.close()
  })

  it('one still running after the time allowed is fenced: the session is loaded without it, and what it still writes is refused', async () => {
    const store = new FileEventStore({ root: eventlogRoot(env.home) })
    const { gate, m, s, running } = await heldTurn(store, { deaf: true, staleSettleMs: 50 })
    m.leaseLost(s.id)
    // Its tool never stops: the take-over loads the session after 50 ms and closes the turn left open.
    await m.takeOver(s.id, s.lastSeq)
    const copy = m.peek(s.id)!
    expect(copy).not.toBe(s)
    await copy.idle()
    gate.open()
    // Refused by its fence (whatever the store would say of the order of its writes).
    const stale = await running.done
    expect(stale.stop_reason).toBe('error')
    expect(stale.output).toContain('this instance lost the session to another instance')
    expect((await copy.prompt('!say two').done).stop_reason).toBe('end_turn')
    const terminals = (await copy.events(0)).filter((e) => TERMINAL_EVENTS.has(e.type))
    expect(terminals.map((e) => (e.type === 'error' ? e.data.message : e.type))).toEqual([TAKEN_OVER, 'agent_result'])
    await copy.flush()
    await store.close()
  })

  it('refuses a prompt sent to it after it gave the session up as not recorded (the client retries where the session runs)', async () => {
    const store = new FileEventStore({ root: eventlogRoot(env.home) })
    const m = env.manager({ store, leases: heldLeases() })
    const s = await m.create()
    m.leaseLost(s.id)
    const late = s.prompt('!say late')
    await expect(late.accepted).rejects.toMatchObject({ code: 'store_unavailable' })
    expect((await late.done).stop_reason).toBe('error')
    expect((await store.load(s.id))!.events.filter((e) => e.type === 'user_message')).toEqual([])
    await store.close()
  })

  it('is waited for by a shutdown, and a load that ends after the shutdown began installs nothing', async () => {
    const store = new CountingStore({ root: eventlogRoot(env.home) })
    const { gate, m, s, running } = await heldTurn(store, { deaf: true })
    const taking = m.takeOver(s.id, s.lastSeq).then(
      () => undefined,
      (err: unknown) => err,
    )
    let down = false
    const shutdown = m.shutdown(10_000).then(() => (down = true))
    await microtasks()
    expect(down).toBe(false)
    gate.open()
    await running.done
    await shutdown
    expect(await taking).toMatchObject({ code: 'session_closed' })
    expect(m.live()).toEqual([])
  })

  it('stops the language servers it started once it has stopped', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'alpha\n')
    let shutdowns = 0
    const factory: LspFactory = (cwd) => {
      const lsp = new LspManager({ cwd, servers: new LspServers([]) })
      const down = lsp.shutdown.bind(lsp)
      lsp.shutdown = async () => {
        shutdowns++
        await down()
      }
      return lsp
    }
    const store = new FileEventStore({ root: eventlogRoot(env.home) })
    const m = env.manager({ store, leases: heldLeases(), lsp: factory })
    const s = await m.create()
    await s.prompt('!call lsp_diagnostics {"path":"a.txt"}').done
    expect(shutdowns).toBe(0)
    m.leaseLost(s.id)
    await s.idle()
    await until(() => shutdowns === 1, 5000, "the copy's language servers to stop")
    await store.close()
  })
})
