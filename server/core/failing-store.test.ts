/**
 * One write path for events, against a store that fails: a rejected append never crashes the
 * process (no unhandled rejection — vitest fails a test that has one), never advances the
 * session state past the log, leaves the log an exact prefix, and once the store accepts writes
 * again the session goes on with the counter continuing where the log ends.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TERMINAL_EVENTS, type AnyEvent } from '../events/event-types.ts'
import { ChimeraError } from '../errors.ts'
import { MemoryEventStore } from '../store/memory-store.ts'
import type { EventStore, QueuedPrompt } from '../store/types.ts'
import { createRpcHandlers } from '../rpc/handlers.ts'
import type { RpcContext } from '../rpc/rpc-server.ts'
import { ofType, testEnv, typesOf, waitForType, within, type TestEnv } from './fixtures/harness.ts'

/** A memory store whose appends fail while `failing(event)` says so. */
class FailingStore extends MemoryEventStore {
  failing: (e: AnyEvent, n: number) => boolean = () => false
  /** Queue entries fail while this says so (a full disk at acknowledgement). */
  refuseQueue = false
  appends = 0
  override async queuePrompt(sessionId: string, p: QueuedPrompt): Promise<void> {
    if (this.refuseQueue) throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' })
    return super.queuePrompt(sessionId, p)
  }
  /** Appends kept but answered with a lost connection while this says so (a Redis restart mid-reply). */
  losingReply: (e: AnyEvent) => boolean = () => false
  /** What a failing append throws (default: a full disk). */
  refusal: () => unknown = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
  override async append(event: AnyEvent): Promise<void> {
    const n = ++this.appends
    if (this.failing(event, n)) throw this.refusal()
    await super.append(event)
    if (this.losingReply(event)) throw new Error('Socket closed unexpectedly')
  }
}

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-failstore-')
})
afterEach(async () => {
  await env.cleanup()
})

function contiguous(events: AnyEvent[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
}

describe('a store that fails', () => {
  it('one rejected tool_progress append: no crash, the log stays contiguous, a notice reports the loss, the turn goes on', async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore, sandbox: 'danger-full-access' }).create()
    let failedOnce = false
    store.failing = (e) => {
      if (e.type !== 'tool_progress' || failedOnce) return false
      failedOnce = true
      return true
    }
    const outcome = await within(
      s.prompt('!call Bash {"command":"for i in 1 2 3; do echo line$i; sleep 0.1; done"}').done,
      8000,
      'the turn',
    )
    expect(failedOnce).toBe(true)
    expect(outcome.success).toBe(true)
    const events = await s.events()
    contiguous(events)
    expect(s.lastSeq).toBe(events.length)
    // Reported as a notice, not as an `error`: that would end the turn (x-turn-ending), which goes on.
    expect(ofType(events, 'error')).toEqual([])
    const notices = ofType(events, 'notice')
    expect(notices).toHaveLength(1)
    expect(notices[0]!.data.level).toBe('error')
    expect(notices[0]!.data.text).toMatch(/event log write failed \(tool_progress not recorded\): ENOSPC/)
    // Inside the turn: before its turn_end, then one turn-ending event, the last.
    expect(notices[0]!.seq).toBeLessThan(ofType(events, 'turn_end')[0]!.seq)
    expect(typesOf(events).filter((t) => TERMINAL_EVENTS.has(t))).toEqual(['agent_result'])
    expect(typesOf(events).at(-1)).toBe('agent_result')
  })

  it('an append kept whose answer was lost: taken as written at the next append (no stuck counter, no loss reported), the turn goes on', async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore }).create()
    let lost: AnyEvent | undefined
    store.losingReply = (e) => {
      if (lost || e.type !== 'text_delta') return false
      lost = e
      return true
    }
    const outcome = await within(s.prompt('!say one\n!sleep 120\n!say two').done, 5000, 'the turn')
    expect(lost).toBeDefined()
    expect(outcome).toMatchObject({ success: true })
    const events = await s.events()
    contiguous(events)
    expect(s.lastSeq).toBe(events.length)
    // The kept event is the log's, once; nothing reported lost; one turn-ending event, the last.
    expect(events.filter((e) => e.id === lost!.id)).toHaveLength(1)
    expect(ofType(events, 'notice')).toEqual([])
    expect(typesOf(events).filter((t) => TERMINAL_EVENTS.has(t))).toEqual(['agent_result'])
    expect(s.messages().at(-1)?.content).toBe('one\ntwo')
  })

  it('every append failing from the Nth on: the turn fails with a clear error, state holds only what is on disk, and after recovery the counter continues', async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore }).create()
    await within(s.prompt('!say first turn').done, 5000, 'the first turn')
    const before = await s.events()
    const n0 = store.appends
    let down = true
    store.failing = (_e, n) => down && n > n0 + 3 // user_message, turn_start, step_start land; then the disk is full
    const outcome = await within(s.prompt('!say second turn').done, 5000, 'the failing turn')
    expect(outcome).toMatchObject({ stop_reason: 'error', success: false, source: 'store' })
    expect(outcome.output).toMatch(/event log write failed .*ENOSPC/)
    const afterFailure = await s.events()
    contiguous(afterFailure)
    expect(afterFailure.length).toBe(before.length + 3)
    // The state is exactly the log: the failed events are nowhere.
    expect(s.lastSeq).toBe(afterFailure.length)
    expect(s.messages().map((m) => m.content)).toEqual(['!say first turn', 'first turn', '!say second turn'])
    expect(s.status).toBe('idle')

    down = false
    const next = await within(s.prompt('!say recovered').done, 5000, 'the turn after recovery')
    expect(next).toMatchObject({ stop_reason: 'end_turn', success: true, output: 'recovered' })
    const all = await s.events()
    contiguous(all)
    // The next turn starts by closing the interrupted one, at the next counter, with the true reason.
    expect(all[afterFailure.length]).toMatchObject({
      seq: afterFailure.length + 1,
      type: 'turn_end',
      data: { stop_reason: 'error' },
    })
    const closing = ofType(all.slice(afterFailure.length), 'error').map((e) => e.data)
    expect(closing).toContainEqual(
      expect.objectContaining({
        source: 'store',
        message: expect.stringMatching(/^the turn was interrupted: event log write failed .*ENOSPC/),
      }),
    )
    expect(JSON.stringify(all)).not.toContain('the process stopped')
    expect(typesOf(all).at(-1)).toBe('agent_result')
  })

  it('a prompt the store cannot record is refused at once (accepted rejects, done fails with source store) and leaves nothing queued', async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore }).create()
    const running = s.prompt('!sleep 400\n!say first')
    await running.accepted
    store.refuseQueue = true
    const refused = s.prompt('!say refused')
    await expect(refused.accepted).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'prompt_not_recorded' }),
    )
    await expect(refused.accepted).rejects.toThrow(/event log write failed \(prompt not recorded\): ENOSPC/)
    // At once: while the first turn is still running.
    const early = await within(refused.done, 200, 'the refused prompt to fail before the running turn ends')
    expect(early).toMatchObject({ stop_reason: 'error', success: false, source: 'store' })
    store.refuseQueue = false
    const later = s.prompt('!say later')
    await later.accepted
    await within(later.done, 5000, 'the later turn')
    const texts = ofType(await s.events(), 'user_message').map((e) => e.data.text)
    expect(texts).toEqual(['!sleep 400\n!say first', '!say later'])
    expect((await store.load(s.id))!.queued).toEqual([])
  })

  it("a turn whose turn_end was written but whose terminal event was refused gets that terminal event, with the store's reason, before the next work", async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore }).create()
    let refused = false
    store.failing = (e) => e.type === 'agent_result' && !refused && (refused = true)
    const outcome = await within(s.prompt('!say cut at the very end').done, 5000, 'the turn')
    expect(outcome).toMatchObject({ stop_reason: 'error', source: 'store' })
    expect(s.turnOpen).toBe(true)
    await within(s.prompt('!say next').done, 5000, 'the next turn')
    const types = typesOf(await s.events())
    const end = types.indexOf('turn_end')
    expect(types.slice(end, end + 3)).toEqual(['turn_end', 'error', 'user_message'])
    const closing = ofType(await s.events(), 'error')[0]!
    expect(closing.data.message).toMatch(
      /^the turn was interrupted: event log write failed \(agent_result not recorded\)/,
    )
    expect(typesOf(await s.events()).at(-1)).toBe('agent_result')
  })

  it('a steer the store cannot record is refused (prompt_not_recorded) and never reaches the model; one it records does', async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore }).create()
    const running = s.prompt('!sleep 400\n!say first')
    await running.accepted
    await waitForType(s, 'step_start')
    store.refuseQueue = true
    await expect(s.steer('!say refused')).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'prompt_not_recorded' }),
    )
    store.refuseQueue = false
    expect(await s.steer('!say recorded')).toBe(true)
    await within(running.done, 5000, 'the running turn')
    const evs = await s.events()
    expect(ofType(evs, 'steering').map((e) => e.data.text)).toEqual(['!say recorded'])
    expect(JSON.stringify(evs)).not.toContain('refused')
    expect((await store.load(s.id))!.queued).toEqual([])
  })

  it("JSON-lines RPC: a prompt the store cannot record is answered at once with the store's error", async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore }).create()
    const running = s.prompt('!sleep 400\n!say first')
    await running.accepted
    store.refuseQueue = true
    const prompt = createRpcHandlers(s).prompt!
    const t0 = Date.now()
    await expect(prompt({ type: 'prompt', message: '!say refused' }, {} as RpcContext)).rejects.toThrow(
      /the turn failed: event log write failed \(prompt not recorded\): ENOSPC/,
    )
    expect(Date.now() - t0).toBeLessThan(300) // not after the running turn
    await within(running.done, 5000, 'the running turn')
  })

  it('a prompt recorded but whose turn the store then refused: closed with the store\'s reason once writes work again, never "the process stopped"', async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore }).create()
    // Queued behind a running turn, so its queue entry is written (a prompt that starts at once
    // has none: its user_message is its record).
    const first = s.prompt('!sleep 300\n!say first')
    await first.accepted
    let down = false
    const p = s.prompt('!say lost turn')
    store.failing = (e) => {
      if (e.type === 'user_message' && e.data.message_id === p.messageId) down = true
      return down
    }
    await p.accepted // the queue entry is on disk; the events are not
    await within(first.done, 5000, 'the first turn')
    const outcome = await within(p.done, 5000, 'the failing turn')
    expect(outcome).toMatchObject({ stop_reason: 'error', source: 'store' })
    expect(ofType(await s.events(), 'user_message').map((e) => e.data.message_id)).toEqual([first.messageId])
    expect((await store.load(s.id))!.queued.map((q) => q.message_id)).toEqual([p.messageId])
    down = false
    store.failing = () => false
    await within(s.prompt('!say next').done, 5000, 'the next turn')
    const evs = await s.events()
    const users = ofType(evs, 'user_message')
    expect(users.map((e) => e.data.message_id)).toEqual([first.messageId, p.messageId, expect.any(String)])
    const closing = ofType(evs, 'error').map((e) => e.data.message)
    expect(closing[0]).toMatch(/^not run: event log write failed \(user_message not recorded\): ENOSPC/)
    expect(JSON.stringify(evs)).not.toContain('the process stopped')
    expect((await store.load(s.id))!.queued).toEqual([])
  })

  it('a prompt to an idle session writes no queue entry: accepted once its user_message is in the log, refused (prompt_not_recorded, nothing owed) when the store refuses that', async () => {
    const store = new FailingStore()
    let entries = 0
    const queuePrompt = store.queuePrompt.bind(store)
    store.queuePrompt = (id, q) => (entries++, queuePrompt(id, q))
    const s = await env.manager({ store: store as EventStore }).create()
    const ok = s.prompt('!say at once')
    await ok.accepted
    expect(ofType(await s.events(), 'user_message').map((e) => e.data.message_id)).toEqual([ok.messageId])
    await within(ok.done, 5000, 'the first turn')
    expect(entries).toBe(0)
    store.failing = (e) => e.type === 'user_message'
    const refused = s.prompt('!say refused')
    await expect(refused.accepted).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'prompt_not_recorded' }),
    )
    await expect(refused.accepted).rejects.toThrow(/prompt not recorded.*ENOSPC/)
    expect(await within(refused.done, 5000, 'the refused turn')).toMatchObject({
      stop_reason: 'error',
      source: 'store',
    })
    // A store that is unavailable (Redis down, a lease lost: fenced) or a deleted session is
    // reported as such, as a refused queue entry is: the client retries or is told it is gone.
    store.refusal = () => new ChimeraError('store_unavailable', 'the Redis store is unavailable')
    const unavailable = s.prompt('!say unavailable')
    await expect(unavailable.accepted).rejects.toSatisfy((e) => ChimeraError.is(e, 'store_unavailable'))
    await within(unavailable.done, 5000, 'the refused turn')
    store.failing = () => false
    await within(s.prompt('!say later').done, 5000, 'the later turn')
    const evs = await s.events()
    // Nothing of the refused prompts: never acknowledged, so owed no closing record.
    expect(ofType(evs, 'user_message').map((e) => e.data.text)).toEqual(['!say at once', '!say later'])
    expect(ofType(evs, 'error')).toEqual([])
    expect(entries).toBe(0)
    expect((await store.load(s.id))!.queued).toEqual([])
  })

  it('a session created on a store that refuses creation is a clear error, not a crash', async () => {
    const store = new FailingStore()
    store.create = async () => {
      throw Object.assign(new Error('EROFS: read-only file system, mkdir'), { code: 'EROFS' })
    }
    await expect(env.manager({ store: store as EventStore }).create()).rejects.toThrow(/EROFS/)
  })
})
