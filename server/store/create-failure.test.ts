/**
 * A create on the event loop whose file write fails (a full disk) leaves nothing behind: the
 * error reaches the caller, the session directory and what was written in it are removed, no
 * store lists or loads the session, and the same id can be made once the disk has room.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { eventFileThread } from './event-file-worker.ts'
import { sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { openedStores } from './fixtures/stores.ts'
import { sessionDir } from './paths.ts'

/** The file name whose exclusive write fails with ENOSPC (none: every write goes through). */
const fault = vi.hoisted(() => ({ name: undefined as string | undefined }))

vi.mock('./file-log.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('./file-log.ts')>()
  return {
    ...real,
    writeExclusive: async (...args: Parameters<typeof real.writeExclusive>) => {
      if (fault.name !== undefined && args[0].endsWith(`/${fault.name}`))
        throw Object.assign(new Error(`ENOSPC: no space left on device, open '${args[0]}'`), { code: 'ENOSPC' })
      return real.writeExclusive(...args)
    },
  }
})

const tmp = mkdtempSync(join(tmpdir(), 'chimera-create-failure-'))
const stores = openedStores()
beforeAll(async () => {
  // Writes stay on the event loop (the thread's path has its own test: event-file-worker.test.ts).
  eventFileThread.startAfter = Infinity
  await eventFileThread.stop()
})
afterEach(async () => {
  fault.name = undefined
  await stores.closeAll()
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('a create whose file write fails', () => {
  it.each(['session.json', 'summary.json'])('%s not written: nothing of the session is left', async (name) => {
    const root = mkdtempSync(join(tmp, 'root-'))
    const store = stores.open({ root })
    const meta = sampleMeta('otter', new Date(Date.UTC(2026, 3, 25, 12, 4, name.length)))
    fault.name = name
    await expect(store.create(meta, sampleSummary(meta))).rejects.toMatchObject({ code: 'ENOSPC' })
    expect(existsSync(sessionDir(root, meta.session_id))).toBe(false)
    const other = stores.open({ root })
    expect(await other.load(meta.session_id)).toBeUndefined()
    expect(await other.list()).toEqual([])
    fault.name = undefined
    await store.create(meta, sampleSummary(meta))
    expect((await other.load(meta.session_id))?.meta).toEqual(meta)
    expect(eventFileThread.answered).toBe(0)
  })
})
