/**
 * A session directory's listing kept while the directory is unchanged (listing-memo.ts): what it
 * showed comes back only while the directory's stamp is the one seen before the listing, a listing
 * taken right after a change is not kept, and a file store reading a session without its marker
 * sees another writer's events although it keeps the listing of its load.
 */
import { renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { openedStores } from './fixtures/stores.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { dirStamp, ListingMemo } from './listing-memo.ts'

const temp = tempDirs()
const stores = openedStores()
afterEach(async () => {
  vi.useRealTimers()
  await stores.closeAll()
  temp.cleanup()
})

/** The clock ten seconds ahead: every directory changed before now looks settled. */
function later(): void {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(Date.now() + 10_000)
}

const facts = { events: 1, last: 1, clean: true }

describe('the listing memo', () => {
  it('a directory just changed is not settled: its listing is not kept', async () => {
    const dir = temp.make('listing-')
    writeFileSync(join(dir, 'a'), '')
    const stamp = await dirStamp(dir)
    expect(stamp.settled).toBe(false)
    const memo = new ListingMemo()
    memo.record('s', stamp, facts)
    expect(await memo.current('s', dir)).toBeUndefined()
  })

  it('gives what the listing showed while the directory is unchanged, and forgets it once an entry is added, renamed or removed', async () => {
    const dir = temp.make('listing-')
    writeFileSync(join(dir, 'a'), '')
    later()
    const memo = new ListingMemo()
    const change = [
      () => writeFileSync(join(dir, 'b'), ''),
      () => renameSync(join(dir, 'b'), join(dir, 'c')),
      () => unlinkSync(join(dir, 'c')),
    ]
    for (const step of change) {
      vi.setSystemTime(Date.now() + 10_000)
      const stamp = await dirStamp(dir)
      expect(stamp.settled).toBe(true)
      memo.record('s', stamp, facts)
      expect(await memo.current('s', dir)).toEqual(facts)
      // A file's contents changing is not a change of the listing.
      writeFileSync(join(dir, 'a'), 'more')
      expect(await memo.current('s', dir)).toEqual(facts)
      step()
      expect(await memo.current('s', dir)).toBeUndefined()
      // Dropped: not given again even for the stamp it had.
      expect(await memo.current('s', dir)).toBeUndefined()
    }
    memo.record('s', await dirStamp(dir), facts)
    memo.forget('s')
    expect(await memo.current('s', dir)).toBeUndefined()
  })
})

describe('a file store reading a session without its marker', () => {
  it("keeps its load's listing, and still sees what another writer added after it", async () => {
    const root = temp.make('listing-store-')
    const meta = sampleMeta('otter')
    const id = meta.session_id
    const first = stores.open({ root })
    await first.create(meta, sampleSummary(meta))
    for (let i = 1; i <= 3; i++) await first.append(sampleEvent(id, i))
    first.release(id)
    await first.close()
    later()
    const reader = stores.open({ root })
    expect((await reader.load(id))?.events).toHaveLength(3)
    expect(reader.holdsMarker(id)).toBe(false)
    expect(await reader.changedElsewhere(id, 3)).toBe(false)
    expect(await reader.changedElsewhere(id, 2)).toBe(true)
    expect((await reader.read(id, 2)).map((e) => e.seq)).toEqual([3])
    expect(await reader.read(id, 3)).toEqual([])

    const writer = stores.open({ root })
    await writer.append(sampleEvent(id, 4))
    writer.release(id)
    await writer.close()
    vi.setSystemTime(Date.now() + 10_000)
    expect(await reader.changedElsewhere(id, 3)).toBe(true)
    expect((await reader.read(id, 2)).map((e) => e.seq)).toEqual([3, 4])
    // The listing taken by that check is kept (settled): it shows the fourth event.
    expect(await reader.changedElsewhere(id, 4)).toBe(false)
    expect((await reader.read(id, 3)).map((e) => e.seq)).toEqual([4])
  })
})
