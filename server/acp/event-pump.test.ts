/**
 * `endAttachments` (the connection's input ended): each pump stops once the copy that runs the
 * session now is idle and its events are delivered; an attached copy the manager has replaced
 * since (SessionManager.takeOver) is not the one waited for.
 */
import { describe, expect, it } from 'vitest'
import type { Session } from '../core/session.ts'
import { endAttachments, type EventPump } from './event-pump.ts'

/** The parts of a session `endAttachments` uses; `idle` resolves when `release` is called. */
function fakeSession(id: string, lastSeq: number) {
  let release!: () => void
  const idle = new Promise<void>((r) => (release = r))
  const asked: string[] = []
  const s = {
    id,
    lastSeq,
    approval: 'ask',
    stopAsking: (reason: string) => void asked.push(reason),
    idle: () => idle,
    flush: () => Promise.resolve(),
  }
  return { session: s as unknown as Session, release, asked }
}

function fakePump() {
  const log: string[] = []
  const pump = {
    delivered: (seq: number) => (log.push(`delivered ${seq}`), Promise.resolve()),
    stop: () => (log.push('stop'), Promise.resolve()),
  }
  return { pump: pump as unknown as EventPump, log }
}

describe('endAttachments', () => {
  it('waits for the copy that runs the session now, not the replaced one attached', async () => {
    const attached = fakeSession('s1', 4)
    attached.release()
    const current = fakeSession('s1', 9)
    const { pump, log } = fakePump()
    let after = 0
    const ended = endAttachments([{ session: attached.session, pump }], {
      after: () => void after++,
      current: () => current.session,
    })
    await new Promise((r) => setImmediate(r))
    // The attached (replaced) copy is idle; the current one runs: nothing stopped yet.
    expect(log).toEqual([])
    expect(current.asked).toHaveLength(1)
    expect(attached.asked).toHaveLength(0)
    current.release()
    await ended
    expect(log).toEqual(['delivered 9', 'stop'])
    expect(after).toBe(1)
  })

  it('a copy that replaces the current one while it finishes is told to stop asking and waited for too', async () => {
    const first = fakeSession('s3', 5)
    const second = fakeSession('s3', 8)
    let current = first.session
    const { pump, log } = fakePump()
    const ended = endAttachments([{ session: first.session, pump }], { current: () => current })
    await new Promise((r) => setImmediate(r))
    expect(first.asked).toHaveLength(1)
    // Replaced (a take-over) while the first copy finishes its turn.
    current = second.session
    first.release()
    await new Promise((r) => setImmediate(r))
    expect(second.asked).toHaveLength(1)
    expect(log).toEqual([])
    second.release()
    await ended
    expect(log).toEqual(['delivered 8', 'stop'])
  })

  it('follows at most four copies, and waits for delivery of what the last one it waited for wrote', async () => {
    const copies = [1, 2, 3, 4, 5].map((n) => fakeSession('s4', n * 10))
    let current = 0
    const { pump, log } = fakePump()
    const ended = endAttachments([{ session: copies[0]!.session, pump }], { current: () => copies[current]!.session })
    for (const c of copies.slice(0, 4)) {
      await new Promise((r) => setImmediate(r))
      expect(log).toEqual([])
      // Replaced again while it finishes (a take-over after each).
      current++
      c.release()
    }
    await ended
    // The fifth copy, never waited for, is not what the client is told it has received.
    expect(log).toEqual(['delivered 40', 'stop'])
    expect(copies[4]!.asked).toHaveLength(1)
  })

  it('detached: each pump stops at once, the sessions untouched', async () => {
    const s = fakeSession('s2', 3)
    const { pump, log } = fakePump()
    await endAttachments([{ session: s.session, pump }], { detach: true, current: () => s.session })
    expect(log).toEqual(['stop'])
    expect(s.asked).toHaveLength(0)
  })
})
