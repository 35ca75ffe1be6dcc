/**
 * One write path for events, against a store that fails: a rejected append never crashes the
 * process (no unhandled rejection — vitest fails a test that has one), never advances the
 * session state past the log, leaves the log an exact prefix, and once the store accepts writes
 * again the session goes on with the counter continuing where the log ends.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import { MemoryEventStore } from '../store/memory-store.ts'
import type { EventStore } from '../store/types.ts'
import { ofType, testEnv, typesOf, within, type TestEnv } from './fixtures/harness.ts'

/** A memory store whose appends fail while `failing(event)` says so. */
class FailingStore extends MemoryEventStore {
  failing: (e: AnyEvent, n: number) => boolean = () => false
  appends = 0
  override async append(event: AnyEvent): Promise<void> {
    const n = ++this.appends
    if (this.failing(event, n)) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    return super.append(event)
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
  it('one rejected tool_progress append: no crash, the log stays contiguous, an error event reports the loss, the turn goes on', async () => {
    const store = new FailingStore()
    const s = await env.manager({ store: store as EventStore, sandbox: 'danger-full-access' }).create()
    let failedOnce = false
    store.failing = (e) => {
      if (e.type !== 'tool_progress' || failedOnce) return false
      failedOnce = true
      return true
    }
    const outcome = await within(s.prompt('!call Bash {"command":"for i in 1 2 3; do echo line$i; sleep 0.1; done"}').done, 8000, 'the turn')
    expect(failedOnce).toBe(true)
    expect(outcome.success).toBe(true)
    const events = await s.events()
    contiguous(events)
    expect(s.lastSeq).toBe(events.length)
    const errors = ofType(events, 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]!.data).toMatchObject({ source: 'store', name: 'EventLogError' })
    expect(errors[0]!.data.message).toMatch(/event log write failed \(tool_progress not recorded\): ENOSPC/)
    expect(typesOf(events).at(-1)).toBe('agent_result')
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
    // The next turn starts by closing the interrupted one, at the next counter.
    expect(all[afterFailure.length]).toMatchObject({ seq: afterFailure.length + 1, type: 'turn_end', data: { stop_reason: 'error' } })
    expect(typesOf(all).at(-1)).toBe('agent_result')
  })

  it('a session created on a store that refuses creation is a clear error, not a crash', async () => {
    const store = new FailingStore()
    store.create = async () => {
      throw Object.assign(new Error('EROFS: read-only file system, mkdir'), { code: 'EROFS' })
    }
    await expect(env.manager({ store: store as EventStore }).create()).rejects.toThrow(/EROFS/)
  })
})
