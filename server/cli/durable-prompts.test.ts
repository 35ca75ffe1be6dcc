/**
 * Acknowledged means durable, through the real CLI server: a prompt answered 202 is on disk
 * before the answer. After SIGKILL with prompts queued behind a running turn, a restarted server
 * shows every accepted prompt in the log — the interrupted turn closed as "the process stopped",
 * each queued prompt with its user_message and a turn that ends in an error saying it never ran.
 * SIGTERM mid-turn closes the turn as a server shutdown (not "cancelled by the client"), and the
 * prompts queued behind it likewise.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { otterServers, post, sessionEvents, waitFor } from './fixtures/otter-http.ts'

const temp = tempDirs()
const { serve } = otterServers()
afterAll(() => temp.cleanup())

const events = sessionEvents

/** A session with a turn that runs for a minute, and `n` prompts accepted behind it; their message ids. */
async function busySession(url: string, n: number): Promise<{ id: string; running: string; queued: string[] }> {
  const created = await post(`${url}/session`, {})
  const { session_id: id } = (await created.json()) as { session_id: string }
  const first = await post(`${url}/session/${id}/message`, { message: '!sleep 60000\n!say never' })
  expect(first.status).toBe(202)
  const running = ((await first.json()) as { message_id: string }).message_id
  await waitFor(
    async () => ((await events(url, id)).some((e) => e.type === 'turn_start') ? true : undefined),
    'the first turn to start',
  )
  const queued: string[] = []
  for (let i = 0; i < n; i++) {
    const r = await post(`${url}/session/${id}/message`, { message: `!say queued ${i}` })
    expect(r.status).toBe(202)
    queued.push(((await r.json()) as { message_id: string }).message_id)
  }
  return { id, running, queued }
}

/** The turn of each user_message: its message id, and how it ended (the terminal event after its turn_end). */
function turns(evs: AnyEvent[]): { id: string; end: AnyEvent | undefined }[] {
  const out: { id: string; end: AnyEvent | undefined }[] = []
  for (const e of evs) {
    if (e.type === 'user_message') out.push({ id: e.data.message_id, end: undefined })
    else if (
      (e.type === 'error' || e.type === 'cancelled' || e.type === 'agent_result') &&
      out.length &&
      !out.at(-1)!.end
    )
      out.at(-1)!.end = e
  }
  return out
}

describe('accepted prompts survive the process', () => {
  it('SIGKILL right after 20 accepted queued prompts: after a restart every one is in the log, closed with the true reason', async () => {
    const home = temp.make('durable-kill-')
    const cwd = temp.make('durable-ws-')
    const a = await serve(home, cwd)
    const { id, running, queued } = await busySession(a.url, 20)
    a.child.kill('SIGKILL')
    await a.exit

    const b = await serve(home, cwd)
    const evs = await events(b.url, id)
    const got = turns(evs)
    expect(got.map((t) => t.id)).toEqual([running, ...queued])
    expect(got[0]!.end).toMatchObject({
      type: 'error',
      data: { message: 'the turn was interrupted: the process stopped before it finished' },
    })
    for (const t of got.slice(1))
      expect(t.end).toMatchObject({
        type: 'error',
        data: { message: "not run: the process stopped before this prompt's turn started" },
      })
    // Closed once: a second read finds the same log (the queue entries are gone).
    b.child.kill('SIGTERM')
    await b.exit
    const c = await serve(home, cwd)
    expect((await events(c.url, id)).length).toBe(evs.length)
  }, 60_000)

  it('SIGTERM mid-turn: the turn ends `cancelled` with reason "server shutdown"; prompts queued behind it are closed as not run', async () => {
    const home = temp.make('durable-term-')
    const cwd = temp.make('durable-ws-')
    const a = await serve(home, cwd)
    const { id, running, queued } = await busySession(a.url, 3)
    a.child.kill('SIGTERM')
    await a.exit
    const b = await serve(home, cwd)
    const got = turns(await events(b.url, id))
    expect(got.map((t) => t.id)).toEqual([running, ...queued])
    expect(got[0]!.end).toMatchObject({ type: 'cancelled', data: { reason: 'server shutdown' } })
    for (const t of got.slice(1))
      expect(t.end).toMatchObject({
        type: 'error',
        data: { message: "not run: server shutdown before this prompt's turn started" },
      })
    expect(JSON.stringify(got)).not.toContain('cancelled by the client')
  }, 60_000)
})
