/**
 * One writer per session across processes (docs/decisions/0431-one-writer-per-session.md): the
 * owner marker is taken exclusively, a marker whose process is gone (or whose PID now names
 * another process) is taken over, a marker of a live process or of another host is left alone,
 * and takers released together by one gate end with exactly one holder. A file store whose
 * session another live process holds reads it as it is and refuses every write with
 * `session_busy` naming that process; once that process is gone it takes the session over.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { ChimeraError } from '../errors.ts'
import { openedStores } from './fixtures/stores.ts'
import { dirSnapshot } from './fixtures/dir-snapshot.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { eventFileName } from './paths.ts'
import {
  OWNER_FILE,
  OWNER_STALE_MS,
  ownerRecord,
  processStart,
  readOwner,
  takeOwner,
  dropOwner,
  type SessionHolder,
} from './session-owner.ts'

const temp = tempDirs()
const stores = openedStores()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await stores.closeAll()
  temp.cleanup()
})

const taker = fileURLToPath(new URL('./fixtures/owner-taker.ts', import.meta.url))

/** A live node process (not this one) and its exit. */
function idleNode(): { child: ChildProcessWithoutNullStreams; exit: Promise<unknown> } {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], {
    stdio: 'pipe',
  }) as ChildProcessWithoutNullStreams
  children.push(child)
  return { child, exit: new Promise((r) => child.on('exit', r)) }
}

/** The PID of a node process that has exited. */
async function deadPid(): Promise<number> {
  const { child, exit } = idleNode()
  const pid = child.pid!
  child.kill('SIGKILL')
  await exit
  return pid
}

/** A holder record for `pid` on this host, started when `/proc` says (or `start`). */
function holderOf(pid: number, start = processStart(pid)): SessionHolder {
  return {
    ...ownerRecord('ferret'),
    pid,
    ...(start === undefined ? {} : { proc_start: start }),
    token: `t${pid}`,
  }
}

function plant(dir: string, h: SessionHolder): void {
  writeFileSync(join(dir, OWNER_FILE), `${JSON.stringify(h)}\n`)
}

const snapshot = dirSnapshot

/** Wait (polling) until `done()`; fails after 20 s. */
async function until(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 20_000; !done(); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > deadline) throw new Error('timed out')
}

async function started(child: ChildProcessWithoutNullStreams): Promise<() => string> {
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  const deadline = Date.now() + 20_000
  while (!out.includes('ready\n')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`taker did not start: ${out}`)
    await new Promise((r) => setTimeout(r, 20))
  }
  return () => out
}

describe('the owner marker', () => {
  it('is created exclusively; a second taker finds the live holder, the holder drops it', async () => {
    const dir = temp.make('owner-')
    const { child } = idleNode()
    const other = holderOf(child.pid!)
    expect(await takeOwner(dir, other)).toBeUndefined()
    const mine = ownerRecord('otter')
    expect(await takeOwner(dir, mine)).toMatchObject({ pid: child.pid, token: other.token })
    // Dropping is the holder's: another record leaves it.
    await dropOwner(dir, mine)
    expect(readOwner(dir)?.token).toBe(other.token)
    await dropOwner(dir, other)
    expect(readOwner(dir)).toBeUndefined()
  })

  it('a marker whose process is gone is taken over', async () => {
    const dir = temp.make('owner-')
    plant(dir, holderOf(await deadPid(), '1'))
    const mine = ownerRecord('otter')
    expect(await takeOwner(dir, mine)).toBeUndefined()
    expect(readOwner(dir)?.token).toBe(mine.token)
    expect(readdirSync(dir)).toEqual([OWNER_FILE])
  })

  it('a PID that now names another process (its start time differs) is not the holder', async () => {
    const dir = temp.make('owner-')
    const { child } = idleNode()
    const start = processStart(child.pid!)
    expect(start).toMatch(/^\d+$/)
    plant(dir, holderOf(child.pid!, String(Number(start) - 1)))
    const mine = ownerRecord('otter')
    expect(await takeOwner(dir, mine)).toBeUndefined()
    expect(readOwner(dir)?.token).toBe(mine.token)
  })

  it('a marker left by a process on another host is treated as live', async () => {
    const dir = temp.make('owner-')
    const far = { ...holderOf(await deadPid()), host: `${hostname()}-elsewhere` }
    plant(dir, far)
    expect(await takeOwner(dir, ownerRecord('otter'))).toMatchObject({ token: far.token, host: far.host })
  })

  it('a marker of a machine booted since is stale whatever its PID names', async () => {
    const dir = temp.make('owner-')
    const me = ownerRecord('otter')
    if (me.boot_id === undefined) return // no procfs here: nothing to compare
    const { child } = idleNode()
    plant(dir, { ...holderOf(child.pid!), boot_id: 'another-boot' })
    expect(await takeOwner(dir, me)).toBeUndefined()
  })

  it('a live holder in another PID namespace is left alone: its PID cannot be checked from here', async () => {
    const dir = temp.make('owner-')
    // Pid 1 of a sandbox (bwrap, a container with host networking): here that PID is init, or
    // any process; the holder is live while it keeps its marker fresh.
    const boxed = { ...holderOf(await deadPid(), '1'), pid_ns: 'pid:[1]' }
    plant(dir, boxed)
    expect(await takeOwner(dir, ownerRecord('otter'))).toMatchObject({ token: boxed.token })
  })

  // A real one where this machine lets a user make a PID namespace (root, or user namespaces).
  const canUnshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0
  it.skipIf(!canUnshare)('a taker in its own PID namespace (pid 1 there) keeps the marker it won', async () => {
    const dir = temp.make('owner-ns-')
    const child = spawn(
      'unshare',
      ['--pid', '--fork', '--mount-proc', process.execPath, '--import', 'tsx', taker, dir],
      {
        stdio: 'pipe',
      },
    ) as ChildProcessWithoutNullStreams
    children.push(child)
    const out = await started(child)
    child.stdin.write('go\n')
    await until(() => out().split('\n')[1] !== undefined && out().split('\n')[1] !== '')
    expect(JSON.parse(out().split('\n')[1]!)).toEqual({ won: true })
    expect(readOwner(dir)?.pid).toBe(1)
    expect(await takeOwner(dir, ownerRecord('otter'))).toMatchObject({ pid: 1 })
    child.stdin.end()
  })

  it('a marker not refreshed for OWNER_STALE_MS is stale, wherever its holder runs', async () => {
    const dir = temp.make('owner-')
    const { child } = idleNode()
    const old = (Date.now() - OWNER_STALE_MS - 60_000) / 1000
    for (const h of [
      holderOf(child.pid!),
      { ...holderOf(child.pid!), host: `${hostname()}-gone-container` },
      { ...holderOf(child.pid!), pid_ns: 'pid:[1]' },
    ]) {
      plant(dir, h)
      utimesSync(join(dir, OWNER_FILE), old, old)
      const mine = ownerRecord('otter')
      expect(await takeOwner(dir, mine)).toBeUndefined()
      expect(readOwner(dir)?.token).toBe(mine.token)
    }
  })

  for (const [what, stale] of [
    ['a free marker', false],
    ['a stale marker', true],
  ] as const)
    it(`takers released by one gate race for ${what}: exactly one wins`, async () => {
      const dir = temp.make('owner-race-')
      if (stale) plant(dir, holderOf(await deadPid(), '1'))
      const procs = Array.from({ length: 4 }, () => {
        const child = spawn(process.execPath, ['--import', 'tsx', taker, dir], {
          stdio: 'pipe',
        }) as ChildProcessWithoutNullStreams
        children.push(child)
        return child
      })
      const outs = await Promise.all(procs.map(started))
      for (const c of procs) c.stdin.write('go\n')
      const results = await Promise.all(
        outs.map(async (out) => {
          const deadline = Date.now() + 20_000
          for (;;) {
            const line = out().split('\n')[1]
            if (line) return JSON.parse(line) as { won: boolean; holder?: number }
            if (Date.now() > deadline) throw new Error(`taker did not answer: ${out()}`)
            await new Promise((r) => setTimeout(r, 20))
          }
        }),
      )
      const winners = procs.filter((_, i) => results[i]!.won)
      expect(winners).toHaveLength(1)
      const winner = winners[0]!.pid
      expect(readOwner(dir)?.pid).toBe(winner)
      for (const r of results) if (!r.won) expect(r.holder).toBe(winner)
      expect(readdirSync(dir)).toEqual([OWNER_FILE])
    })
})

describe('a file store over a session another process holds', () => {
  it('reads it as it is, refuses every write naming the holder, and takes it over once that process is gone', async () => {
    const root = temp.make('owner-store-')
    const meta = sampleMeta('otter')
    const id = meta.session_id
    const dir = join(root, id)
    const first = stores.open({ root })
    await first.create(meta, sampleSummary(meta))
    for (let i = 1; i <= 5; i++) await first.append(sampleEvent(id, i))
    first.release(id)
    await first.close()
    // A holder that is alive, mid-write: a torn record after the five acknowledged ones.
    const { child, exit } = idleNode()
    plant(dir, holderOf(child.pid!))
    writeFileSync(join(dir, eventFileName(6, 'text_delta')), '{"seq":6,"ty')
    const before = snapshot(dir)

    const second = stores.open({ root, agent: 'ferret' })
    const loaded = await second.load(id)
    expect(loaded?.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5])
    expect(loaded?.heldBy?.pid).toBe(child.pid)
    expect(loaded?.repaired).toBe(false)
    expect((await second.read(id)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5])
    expect((await second.readSession(id))?.events).toHaveLength(5)
    expect(await second.readStored(id, 0, 5)).toBeUndefined()
    expect((await second.list()).map((s) => s.session_id)).toContain(id)
    const busy = (p: Promise<unknown>) =>
      expect(p).rejects.toSatisfy(
        (e: unknown) =>
          ChimeraError.is(e, 'session_busy') &&
          e.message.includes(
            `session ${id} is open in another chimera process (PID ${child.pid}, chimera ferret, since`,
          ),
      )
    await busy(second.append(sampleEvent(id, 6)))
    await busy(second.appendMany([sampleEvent(id, 6), sampleEvent(id, 7)]))
    await busy(second.writeSummary(id, sampleSummary(meta)))
    await busy(second.queuePrompt(id, { message_id: 'msg-1', text: 'hi', accepted_at: 1, order: 0 }))
    await busy(second.unqueuePrompt(id, 'msg-1'))
    await busy(second.remove(id))
    second.release(id)
    expect(snapshot(dir)).toEqual(before)

    child.kill('SIGKILL')
    await exit
    // The holder is gone: the next write takes the session over (and repairs the torn tail).
    await second.append(sampleEvent(id, 6))
    expect(readOwner(dir)?.pid).toBe(process.pid)
    expect((await second.read(id)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6])
    expect(readdirSync(join(dir, 'quarantine'))).toHaveLength(1)
    // Released: the marker goes (after the checksum), so another process may take it.
    second.release(id)
    await second.close()
    expect(readOwner(dir)).toBeUndefined()
  })

  it('the holder keeps its markers fresh; one taken over meanwhile is no longer written', async () => {
    const root = temp.make('owner-store-')
    const warnings: string[] = []
    const logger = { debug() {}, info() {}, error() {}, warn: (msg: string) => void warnings.push(msg) }
    const store = stores.open({ root, agent: 'otter', heartbeatMs: 10, logger })
    const meta = sampleMeta('otter')
    const id = meta.session_id
    const dir = join(root, id)
    await store.create(meta, sampleSummary(meta))
    // Taken next in the session's queue, before its next operation (after create is answered).
    await store.read(id)
    const old = (Date.now() - OWNER_STALE_MS - 60_000) / 1000
    utimesSync(join(dir, OWNER_FILE), old, old)
    await until(() => statSync(join(dir, OWNER_FILE)).mtimeMs > Date.now() - OWNER_STALE_MS)
    // Another process took it over (this one looked dead): the next beat finds it, writes stop.
    const { child } = idleNode()
    plant(dir, holderOf(child.pid!))
    await until(() => warnings.some((w) => w.includes('no longer holds the session')))
    await expect(store.append(sampleEvent(id, 1))).rejects.toSatisfy((e: unknown) => ChimeraError.is(e, 'session_busy'))
    expect(readOwner(dir)?.pid).toBe(child.pid)
  })

  it('a write after a missed beat (the event loop blocked, the process stopped) confirms the marker first: taken over meanwhile, it is refused', async () => {
    const root = temp.make('owner-store-')
    const warnings: string[] = []
    const logger = { debug() {}, info() {}, error() {}, warn: (msg: string) => void warnings.push(msg) }
    const store = stores.open({ root, agent: 'otter', logger })
    const meta = sampleMeta('otter')
    const id = meta.session_id
    const dir = join(root, id)
    await store.create(meta, sampleSummary(meta))
    await store.append(sampleEvent(id, 1))
    // This process did not run for 20 s (two beats missed, no timer fired: the clock moves, the
    // marker ages); another process found it stale and took the session over meanwhile.
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Date.now() + 20_000)
      const { child } = idleNode()
      plant(dir, holderOf(child.pid!))
      const before = snapshot(dir)
      await expect(store.append(sampleEvent(id, 2))).rejects.toSatisfy((e: unknown) =>
        ChimeraError.is(e, 'session_busy'),
      )
      await expect(
        store.queuePrompt(id, { message_id: 'msg-1', text: 'hi', accepted_at: 1, order: 0 }),
      ).rejects.toSatisfy((e: unknown) => ChimeraError.is(e, 'session_busy'))
      await expect(store.remove(id)).rejects.toSatisfy((e: unknown) => ChimeraError.is(e, 'session_busy'))
      expect(warnings.some((w) => w.includes('no longer holds the session'))).toBe(true)
      expect(store.holdsMarker(id)).toBe(false)
      expect(readOwner(dir)?.pid).toBe(child.pid)
      // Nothing written into the session the other process now holds.
      expect(snapshot(dir)).toEqual(before)
    } finally {
      vi.useRealTimers()
    }
  })

  it('a write from a copy read before another writer went on is refused, and the session let go again', async () => {
    const root = temp.make('owner-store-')
    const meta = sampleMeta('otter')
    const id = meta.session_id
    const first = stores.open({ root })
    await first.create(meta, sampleSummary(meta))
    await first.append(sampleEvent(id, 1))
    first.release(id)
    await first.close()
    const reader = stores.open({ root })
    expect((await reader.load(id))?.events).toHaveLength(1)
    expect(reader.holdsMarker(id)).toBe(false)
    const writer = stores.open({ root })
    await writer.append(sampleEvent(id, 2))
    writer.release(id)
    await writer.close()
    // The reader's copy says one event: its write of seq 2 does not follow the log.
    await expect(reader.append(sampleEvent(id, 2))).rejects.toSatisfy((e: unknown) =>
      ChimeraError.is(e, 'seq_mismatch'),
    )
    // Let go (after the write's turn in the queue): the next load reads it again.
    await until(() => !reader.holdsMarker(id) && readOwner(join(root, id)) === undefined)
  })

  it('taking the marker of a new session reads and writes nothing synchronously (no blocking call on session/new)', async () => {
    const root = temp.make('owner-store-')
    const script = fileURLToPath(new URL('./fixtures/create-sync-io.ts', import.meta.url))
    const r = spawnSync(process.execPath, ['--trace-sync-io', '--import', 'tsx', script, root], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(r.stdout, r.stderr).toBe('done\n')
    // Each report is a stack: a synchronous fs call made from the store's code.
    const reports = r.stderr.split('WARNING: Detected use of sync API').slice(1)
    const fromStore = reports.filter(
      (stack) => /^\s+at \w+Sync \(node:fs/.test(stack) && /server\/store\/(?!fixtures)/.test(stack),
    )
    expect(fromStore).toEqual([])
    expect(readOwner(join(root, readdirSync(root)[0]!))).toBeUndefined()
  })

  it('a new session takes its marker before its next operation; release and close drop it', async () => {
    const root = temp.make('owner-store-')
    const store = stores.open({ root, agent: 'otter' })
    const meta = sampleMeta('otter')
    await store.create(meta, sampleSummary(meta))
    await store.read(meta.session_id)
    expect(readOwner(join(root, meta.session_id))).toMatchObject({ pid: process.pid, agent: 'otter' })
    store.release(meta.session_id)
    await store.close()
    expect(readOwner(join(root, meta.session_id))).toBeUndefined()
  })
})
