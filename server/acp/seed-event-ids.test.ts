/**
 * The seed dialects' `eventId` (acp-seed.openrpc.yaml "Event ids and replay"): the first
 * notification of a session is `eventId: 1`, the second 2, with no gaps; `session/resume`
 * cursors are in those numbers (at the latest id nothing is replayed); a replay and a restarted
 * server (a new manager over the same home) number every notification the same way, and live
 * notifications after a `session/load` continue the count.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import { startAcp } from './fixtures/in-process.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-acp-ids-')
})
afterEach(async () => {
  await env.cleanup()
})

const updates = (frames: Record<string, any>[], from = 0) =>
  frames.slice(from).filter((f) => f.method === 'session/update')

describe.each(['otter', 'ferret'] as const)('%s seed eventId', (agent) => {
  it('counts notifications from 1 without gaps, resumes in those numbers, and keeps them across a restart', async () => {
    const a = startAcp(agent, env.manager())
    await a.call('initialize', {})
    const sid = (await a.call('session/new', {})).result.sessionId as string
    await a.call('session/message', { sessionId: sid, prompt: '!say one' })
    await a.call('session/message', { sessionId: sid, prompt: '!say two' })
    const live = updates(a.frames)
    expect(live.length).toBeGreaterThan(3)
    expect(live.map((u) => u.params.eventId)).toEqual(live.map((_, i) => i + 1))

    const atEnd = (await a.call('session/resume', { sessionId: sid, sinceEventId: live.length })).result
    expect(atEnd).toEqual({ sessionId: sid, replayed: 0, lastEventId: live.length, truncated: false })
    const mark = a.frames.length
    const fromTwo = (await a.call('session/resume', { sessionId: sid, sinceEventId: 2 })).result
    expect(fromTwo).toEqual({ sessionId: sid, replayed: live.length - 2, lastEventId: live.length, truncated: false })
    expect(updates(a.frames, mark).map((u) => u.params)).toEqual(live.slice(2).map((u) => u.params))
    a.input.end()
    await a.done

    // A restarted server: the same history numbers the same, new notifications continue it.
    const b = startAcp(agent, env.manager())
    await b.call('initialize', {})
    await b.call('session/resume', { sessionId: sid, sinceEventId: 0 })
    expect(updates(b.frames).map((u) => u.params)).toEqual(live.map((u) => u.params))
    const before = b.frames.length
    await b.call('session/message', { sessionId: sid, prompt: '!say three' })
    const next = updates(b.frames, before).map((u) => u.params.eventId)
    expect(next.length).toBeGreaterThan(0)
    expect(next).toEqual(next.map((_, i) => live.length + 1 + i))
    b.input.end()
    await b.done

    const c = startAcp(agent, env.manager())
    await c.call('initialize', {})
    await c.call('session/load', { sessionId: sid })
    const loaded = c.frames.length
    await c.call('session/message', { sessionId: sid, prompt: '!say four' })
    expect(updates(c.frames, loaded)[0]!.params.eventId).toBe(live.length + next.length + 1)
    c.input.end()
    await c.done
  })
})
