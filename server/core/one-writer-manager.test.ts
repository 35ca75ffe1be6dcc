/**
 * One writer per session, in the manager (docs/decisions/0431-one-writer-per-session.md): a
 * session read here takes no owner marker (another process may drive it meanwhile) until its
 * first write; a detail read that had to recover a session lets its marker go again, even when
 * a stale read-only copy is in memory; a purge keeps the marker until the session is removed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChimeraError } from '../errors.ts'
import { eventFileName, eventlogRoot, sessionDir } from '../store/paths.ts'
import { OWNER_FILE, ownerRecord, processStart, readOwner } from '../store/session-owner.ts'
import { testEnv, until, within, type TestEnv } from './fixtures/harness.ts'
import type { SessionManager } from './manager.ts'

let env: TestEnv
const children: ChildProcessWithoutNullStreams[] = []
beforeEach(() => {
  env = testEnv('chimera-one-writer-')
})
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await env.cleanup()
})

/** A session with one finished turn, written by a manager that has let it go again. */
async function writtenAndLetGo(): Promise<{ id: string; dir: string; events: number }> {
  const m = env.manager()
  const s = await m.create()
  await within(s.prompt('hello').done, 6000, 'the turn')
  const events = s.lastSeq
  await m.delete(s.id)
  const dir = sessionDir(eventlogRoot(env.home), s.id)
  await until(() => readOwner(dir) === undefined, 5000, 'the marker dropped')
  return { id: s.id, dir, events }
}

const marker = (dir: string): number | undefined => readOwner(dir)?.pid

/** A live node process (not this one), killed after the test. */
function liveChild(): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], {
    stdio: 'pipe',
  }) as ChildProcessWithoutNullStreams
  children.push(child)
  return child
}

/** That process holds the session (its marker, as it would have written it). */
function plantHolder(dir: string, pid: number): void {
  const start = processStart(pid)
  writeFileSync(
    join(dir, OWNER_FILE),
    `${JSON.stringify({ ...ownerRecord('ferret'), pid, ...(start ? { proc_start: start } : {}) })}\n`,
  )
}

describe('the manager over the file store', () => {
  it('a session read takes no marker; its first write does', async () => {
    const { id, dir } = await writtenAndLetGo()
    const m = env.manager()
    const s = await m.get(id)
    await m.detail(id)
    expect(marker(dir)).toBeUndefined()
    expect(s.heldBy).toBeUndefined()
    await within(s.prompt('again').done, 6000, 'the second turn')
    expect(marker(dir)).toBe(process.pid)
  })

  it('a copy read without the marker is refused at its first write once another process took the session, and read again', async () => {
    const { id, dir } = await writtenAndLetGo()
    const m = env.manager()
    const s = await m.get(id)
    expect(s.heldBy).toBeUndefined()
    const child = liveChild()
    plantHolder(dir, child.pid!)
    await expect(s.prompt('mine').accepted).rejects.toSatisfy((e: unknown) => ChimeraError.is(e, 'session_busy'))
    expect(marker(dir)).toBe(child.pid)
    await s.idle()
    // Read again before its next use: now a read-only copy naming the holder.
    expect((await m.get(id)).heldBy?.pid).toBe(child.pid)
  })

  it('a copy read without the marker is read again after another process wrote and let go', async () => {
    const { id, dir } = await writtenAndLetGo()
    const m = env.manager()
    expect((await m.get(id)).heldBy).toBeUndefined()
    const elsewhere = env.manager()
    await (await elsewhere.get(id)).rename('from elsewhere')
    await elsewhere.delete(id)
    await until(() => marker(dir) === undefined, 5000, 'the other manager let go')
    const s = await m.get(id)
    expect(s.summary.title).toBe('from elsewhere')
    await s.rename('mine')
    expect(s.summary.title).toBe('mine')
  })

  it('a detail read that recovered a session lets it go, even with a stale read-only copy here', async () => {
    const { id, dir, events } = await writtenAndLetGo()
    // Another live process holds it: this manager's copy only reads.
    const child = liveChild()
    const exit = new Promise((r) => child.on('exit', r))
    plantHolder(dir, child.pid!)
    const m: SessionManager = env.manager()
    expect((await m.get(id)).heldBy?.pid).toBe(child.pid)
    // It dies mid-write: a torn record the next load repairs (a write: it takes the marker).
    child.kill('SIGKILL')
    await exit
    writeFileSync(join(dir, eventFileName(events + 1, 'text_delta')), '{"seq":')
    expect((await m.detail(id)).events).toHaveLength(events)
    await until(() => marker(dir) === undefined, 5000, 'the marker let go after the detail read')
  })

  it('a summary write begun just before the session is let go does not take its marker back', async () => {
    const m = env.manager()
    const s = await m.create()
    await within(s.prompt('hello').done, 6000, 'the turn')
    const dir = sessionDir(eventlogRoot(env.home), s.id)
    const writes: Promise<void>[] = []
    const write = m.store.writeSummary.bind(m.store)
    m.store.writeSummary = (sid, summary) => {
      const done = write(sid, summary)
      writes.push(done)
      return done
    }
    // The compaction record is a summary point: its summary write is asked for as it is written.
    await s.compact()
    await m.letGo(s.id)
    // Whatever the session asked of the store by the next macrotask has ended.
    await new Promise((r) => setImmediate(r))
    await Promise.allSettled(writes)
    expect(writes.length).toBeGreaterThan(0)
    // The release runs after the session's queued work: the marker goes then, and stays gone.
    // (The file is gone as the unlink ends on a pool thread, a moment before the store hears
    // of it and forgets the marker: wait for both.)
    await until(() => marker(dir) === undefined && m.store.holdsMarker?.(s.id) !== true, 5000, 'the marker dropped')
    await new Promise((r) => setImmediate(r))
    expect(marker(dir)).toBeUndefined()
    expect(m.store.holdsMarker?.(s.id)).not.toBe(true)
  })

  it('a purge keeps the marker until the session is removed', async () => {
    const m = env.manager()
    const s = await m.create()
    await within(s.prompt('hello').done, 6000, 'the turn')
    const released: string[] = []
    const release = m.store.release!.bind(m.store)
    m.store.release = (sid: string) => {
      released.push(sid)
      release(sid)
    }
    expect(await m.delete(s.id, { purge: true })).toBe(true)
    expect(released).not.toContain(s.id)
    expect(marker(sessionDir(eventlogRoot(env.home), s.id))).toBeUndefined()
  })
})
