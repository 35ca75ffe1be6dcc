/**
 * A `Last-Event-ID` replay of a session nobody holds open (docs/decisions/0392-vouched-segment.md):
 * sent from the segment its checksum vouches for, byte for byte the records of a replay of the
 * loaded session, ended after the last turn without loading it; a segment changed since its
 * checksum goes the loading (repairing) path and the replay is still the event files' records.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { socketTarget, type ServerTarget } from '../../conformance/harness/targets.ts'
import { eventlogRoot } from '../store/paths.ts'
import { SEGMENT_FILE, SUM_FILE } from '../store/segment.ts'

let t: ServerTarget | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

async function replay(t: ServerTarget, id: string, from = '0'): Promise<string> {
  const res = await fetch(`${t.baseUrl}/sessions/${id}/events`, {
    headers: { accept: 'text/event-stream', 'last-event-id': from },
  })
  expect(res.status).toBe(200)
  return res.text()
}

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 5))
  expect(ok()).toBe(true)
}

describe('replay of a session not in memory', () => {
  it('sends what the checksum vouches for without loading the session; a changed segment is loaded and repaired', async () => {
    t = await socketTarget()
    const m = t.server.deps.manager
    const post = async (path: string, body: unknown): Promise<Record<string, unknown>> =>
      (await (
        await fetch(`${t!.baseUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as Record<string, unknown>
    const id = (await post('/sessions', { prompt: '!say one' })).session_id as string
    await m.peek(id)!.idle()
    expect((await post(`/sessions/${id}/turns`, { prompt: '!say two' })).status).toBe('running')
    await m.peek(id)!.idle()
    const loaded = await replay(t, id)
    const fromThree = await replay(t, id, '3')
    expect(loaded).toMatch(/event: end\n/)

    // Evicted: the store writes the segment's checksum once the session leaves its memory.
    const dir = join(eventlogRoot(t.home), id)
    m.evictIdle(1, Date.now() + 60_000)
    await until(() => existsSync(join(dir, SUM_FILE)))
    expect(m.peek(id)).toBeUndefined()
    expect(await replay(t, id)).toBe(loaded)
    expect(await replay(t, id, '3')).toBe(fromThree)
    expect(m.peek(id)).toBeUndefined()

    // A same-length change the checksum sees (line 3 claims counter 4): loaded, cut, rebuilt.
    const seg = readFileSync(join(dir, SEGMENT_FILE), 'utf8')
    writeFileSync(join(dir, SEGMENT_FILE), seg.replace('{"seq":3,', '{"seq":4,'))
    expect(await replay(t, id)).toBe(loaded)
    expect(m.peek(id)).toBeDefined()
    expect(readFileSync(join(dir, SEGMENT_FILE), 'utf8')).toBe(seg)
  })
})
