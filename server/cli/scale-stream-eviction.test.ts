/**
 * Idle eviction on an instance that only streams a session (docs/scale-out.md, docs/http.md "SSE"):
 * instance B serves with a 1 s session TTL and follows a session that A runs. B's copy of the
 * session is touched by no turn (A runs them), so before decision 0361 B evicted it after 1 s and
 * ended the stream mid-turn (`end`, `success: false`). A session with an open stream is in use:
 * B keeps it, and the stream follows the turn to its `agent_result`. Gates, not sleeps: B's sweep
 * is known to have run once B logged the eviction of another session it had loaded and no longer
 * streams.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { logged, startInstance, startInstances, type Instance, type Instances } from '../store/fixtures/instances.ts'
import { follow, gapsAndRepeats } from '../store/fixtures/sse-follow.ts'

let cluster: Instances | undefined
let b: Instance | undefined
const home = mkdtempSync(join(tmpdir(), 'chimera-evict-home-'))
afterAll(async () => {
  await b?.stop()
  await cluster?.stop()
  rmSync(home, { recursive: true, force: true })
})

const create = async (url: string, prompt: string): Promise<string> => {
  const res = await fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt }),
  })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

describe('idle eviction on an instance that only streams a session', () => {
  it(
    'keeps the session while a stream follows it: the stream sees the turn end, not an eviction',
    { timeout: 60_000 },
    async () => {
      cluster = await startInstances(1)
      const a = cluster.instances[0]!
      b = await startInstance('B', cluster.redis.url, {
        workspace: cluster.workspace,
        home,
        args: ['--approval', 'allow', '--session-ttl', '1'],
      })
      // S runs on A, sleeping well past B's TTL; B follows it (no reconnection: an early end must show).
      const s = await create(a.url, '!say start\n!sleep 6000\n!say done')
      let started!: () => void
      const start = new Promise<void>((r) => (started = r))
      const stream = follow(`${b.url}/sessions/${s}/events`, {
        onRecord: (r) => {
          if (r.event === 'text_delta' && r.data.includes('start')) started()
        },
      })
      await start
      // Q: another session B loads for a stream that then ends; B evicts it once idle for its TTL.
      const q = await create(a.url, '!say q')
      expect((await follow(`${b.url}/sessions/${q}/events`).done).ended).toBe(true)
      await logged(b, `session ${q} evicted after 1 s idle`)
      // B's sweep has run past S's TTL too (S was last touched before Q): S is kept, its stream open.
      expect(b.stderr().includes(`session ${s} evicted`), 'B evicted the session its stream follows').toBe(false)
      const so = stream.records.map((r) => r.event)
      expect(so.includes('agent_result'), "S's turn ended before B's sweep (too slow a machine?)").toBe(false)
      expect(so.includes('end'), 'the stream on B ended before the turn did').toBe(false)
      const r = await stream.done
      expect(r.ended).toBe(true)
      expect(gapsAndRepeats(r.records)).toEqual([])
      const last = r.records.filter((x) => x.event !== 'end').at(-1)
      expect(last?.event).toBe('agent_result')
      expect(last?.data).toContain('"success":true')
      expect(r.records.at(-1)?.data).toContain('"success":true')
      expect(b.stderr().includes(`session ${s} evicted`), 'B evicted the session its stream follows').toBe(false)
    },
  )
})
