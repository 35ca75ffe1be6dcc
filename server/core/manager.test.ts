/**
 * The session manager under many callers: concurrent `get(id)` of a stored session share one
 * load (one Session object, one log), idle eviction cancels the running turn, releases its
 * permission requests, tells listeners and leaves a persisted session loadable again; a deleted
 * memory session frees its place in the bounded memory store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ModelRegistry } from './model-registry.ts'
import { OfflineProvider } from '../providers/offline.ts'
import { Gate, ScriptedProvider, chunks } from './fixtures/scripted-provider.ts'
import { ofType, testEnv, waitForType, within, type TestEnv } from './fixtures/harness.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-manager-')
})
afterEach(async () => {
  await env.cleanup()
})

describe('loading a stored session', () => {
  it('concurrent get(id) after a restart return the same Session, and both callers write one contiguous log', async () => {
    const first = await env.manager().create()
    await within(first.prompt('!say before the restart').done, 5000, 'the first turn')
    const restarted = env.manager()
    const got = await Promise.all(Array.from({ length: 20 }, () => restarted.get(first.id)))
    expect(new Set(got).size).toBe(1)
    const [a, b] = [got[0]!, got[7]!]
    await Promise.all([
      within(a.prompt('!say one').done, 5000, 'turn one'),
      within(b.prompt('!say two').done, 5000, 'turn two'),
    ])
    const events = await a.events()
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    expect(ofType(events, 'agent_result').map((e) => e.data.output)).toEqual(['before the restart', 'one', 'two'])
  })

  it('an unknown id fails for every concurrent caller, and nothing is cached', async () => {
    const m = env.manager()
    const id = 'otter-20260101T000000Z-00000000-0000-4000-8000-000000000000'
    const results = await Promise.allSettled([m.get(id), m.get(id)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(m.live()).toEqual([])
  })
})

describe('idle eviction', () => {
  it('evicts sessions untouched past the TTL: the running turn is cancelled, its permission request released, listeners told; the session loads again', async () => {
    const m = env.manager({ approval: 'ask' })
    const busy = await m.create()
    const idle = await m.create()
    const { done } = busy.prompt('!call Write {"path":"x.txt","content":"x"}')
    await waitForType(busy, 'permission_request')
    const evicted: string[] = []
    m.onEvict((s, reason) => evicted.push(`${s.id}:${reason}`))
    expect(m.evictIdle(60_000)).toEqual([])
    const out = m.evictIdle(1, Date.now() + 10)
    expect(out.map((s) => s.id).sort()).toEqual([busy.id, idle.id].sort())
    expect(evicted.sort()).toEqual([`${busy.id}:idle`, `${idle.id}:idle`].sort())
    const outcome = await within(done, 5000, 'the evicted turn')
    expect(outcome.stop_reason).toBe('cancelled')
    const events = await busy.events()
    expect(ofType(events, 'permission_reply')[0]!.data).toMatchObject({ decision: 'cancelled' })
    expect(m.live()).toEqual([])
    // Still on disk: loadable again, as a new Session with the same history.
    const again = await m.get(busy.id)
    expect(again).not.toBe(busy)
    expect(again.lastSeq).toBe(events.length)
  })

  it('a session in use (an open event stream, `inUse`) is not evicted however long untouched', async () => {
    const m = env.manager()
    const followed = await m.create()
    const idle = await m.create()
    const out = m.evictIdle(1, Date.now() + 10, (id) => id === followed.id)
    expect(out.map((s) => s.id)).toEqual([idle.id])
    expect(m.peek(followed.id)).toBe(followed)
    expect(followed.closed).toBe(false)
  })

  it('a TTL of 0 or a non-finite one evicts nothing', async () => {
    const m = env.manager()
    await m.create()
    expect(m.evictIdle(0, Date.now() + 1e9)).toEqual([])
    expect(m.evictIdle(Number.POSITIVE_INFINITY, Date.now() + 1e9)).toEqual([])
    expect(m.live()).toHaveLength(1)
  })

  it('a deleted memory session frees its place in the memory store', async () => {
    const m = env.manager()
    const s = await m.create({ persist: false })
    expect(await m.memory.load(s.id)).toBeDefined()
    expect(await m.delete(s.id)).toBe(true)
    await s.idle()
    await new Promise((r) => setTimeout(r, 10))
    expect(await m.memory.load(s.id)).toBeUndefined()
  })
})

describe('shutdown', () => {
  it('cancels every running turn and waits until their last events are written', async () => {
    const hold = new Gate()
    const provider = new ScriptedProvider((req) =>
      chunks([{ type: 'text', text: 'working' }], { gate: hold, signal: req.signal }),
    )
    const m = env.manager({ models: new ModelRegistry([new OfflineProvider(), provider]), model: 'scripted' })
    const sessions = await Promise.all([m.create(), m.create(), m.create()])
    const turns = sessions.map((s) => s.prompt('go').done)
    await Promise.all(sessions.map((s) => waitForType(s, 'text_delta')))
    await within(m.shutdown(5000), 6000, 'shutdown')
    for (const [i, s] of sessions.entries()) {
      expect((await turns[i]!).stop_reason).toBe('cancelled')
      expect((await s.events()).at(-1)).toMatchObject({ type: 'cancelled', data: { partial_output: 'working' } })
    }
    expect(hold.isOpen).toBe(false)
  })
})
