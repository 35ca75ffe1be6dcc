/**
 * The session manager's side of the lease sweep (docs/decisions/0375-lease-sweep.md): the
 * `expired` hook it gives the leases closes a turn another instance left open with the same
 * take-over a command's claim runs (one `error` saying the turn was interrupted), and fails when
 * the store refused the closing writes, so the sweep tries again later; the second try closes
 * the turn once. Two managers over one store stand for two instances: the first "dies" mid-turn
 * (its writes fail from then on), the second sweeps.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openEventStore } from '../store/open.ts'
import { AppendGroupError, type EventStore } from '../store/types.ts'
import { TAKEN_OVER } from './manager.ts'
import { testEnv, waitForType, type TestEnv } from './fixtures/harness.ts'
import { heldLeases } from './fixtures/held-leases.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-sweep-')
})
afterEach(async () => {
  await env.cleanup()
})

/** `store` with appends (one by one or grouped) that fail while `failing()` says so. */
function failingAppends(store: EventStore, failing: () => boolean): EventStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'append')
        return async (...args: Parameters<EventStore['append']>) => {
          if (failing()) throw new Error('the store refuses this write')
          return target.append(...args)
        }
      // Group commits (FileEventStore.appendMany) are refused alike.
      if (prop === 'appendMany')
        return async (...args: Parameters<NonNullable<EventStore['appendMany']>>) => {
          if (failing()) throw new AppendGroupError(0, new Error('the store refuses this write'))
          return target.appendMany!(...args)
        }
      const v: unknown = Reflect.get(target, prop, receiver)
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
}

describe('the expired hook', () => {
  it('closes the turn a dead owner left open, once; a close the store refused fails and is retried', async () => {
    const base = openEventStore(env.home)
    let ownerDead = false
    const owner = env.manager({ store: failingAppends(base, () => ownerDead) })
    const session = await owner.create()
    void session.prompt('!sleep 60000')
    await waitForType(session, 'step_start')
    ownerDead = true

    let refuse = true
    const leases = heldLeases()
    const sweeper = env.manager({ store: failingAppends(base, () => refuse), leases })
    const expired = leases.hooks!.expired!
    const length = (await base.read(session.id)).length
    await expect(expired(session.id, length)).rejects.toMatchObject({
      code: 'store_unavailable',
      message: expect.stringMatching(/could not be closed/),
    })
    expect(await base.read(session.id)).toHaveLength(length)

    refuse = false
    await expired(session.id, length)
    const events = await base.read(session.id)
    const closing = events.filter((e) => e.type === 'error')
    expect(closing).toHaveLength(1)
    expect(closing[0]!.data).toMatchObject({ message: TAKEN_OVER, source: 'internal' })
    expect(events.at(-1)!.type).toBe('error')
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    expect(sweeper.peek(session.id)?.turnOpen).toBe(false)
    // Swept again (another sweeper, a late retry): nothing more is written.
    await expired(session.id, events.length)
    expect(await base.read(session.id)).toHaveLength(events.length)
  })
})
