/**
 * The segment's checksum file (docs/decisions/0392-vouched-segment.md): written when a session
 * leaves the store's memory, it lets `readVouched` serve the segment's lines as stored records
 * without opening the session; any change to those bytes (a same-length edit too), a shorter
 * segment or a session held open answers nothing, and the load still repairs from the event files.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { randomBytes } from 'node:crypto'
import * as zlib from 'node:zlib'
import { crc32Combine, SEGMENT_FILE, SUM_FILE } from './segment.ts'
import { storedEvent } from './stored-lines.ts'
import type { VouchedRecords } from './types.ts'
import { openedStores } from './fixtures/stores.ts'

const fileStores = openedStores()
afterEach(() => fileStores.closeAll())

const temp = tempDirs()
let root: string
let id: string
let sent: AnyEvent[]
const dir = (): string => join(root, id)

beforeEach(async () => {
  root = temp.make('vouched-')
  const store = fileStores.open({ root })
  const meta = sampleMeta('otter')
  id = meta.session_id
  await store.create(meta, sampleSummary(meta))
  sent = Array.from({ length: 40 }, (_, i) => sampleEvent(id, i + 1))
  for (const e of sent) await store.append(e)
  expect(existsSync(join(dir(), SUM_FILE))).toBe(false)
  store.release(id)
  await until(() => existsSync(join(dir(), SUM_FILE)))
})
afterEach(() => temp.cleanup())

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5))
  expect(ok()).toBe(true)
}

/** Every record the vouched pages give, parsed. */
async function all(v: VouchedRecords): Promise<AnyEvent[]> {
  const out: AnyEvent[] = []
  for (let after = 0; ;) {
    const page = await v.page(after)
    if (!page) return out
    for (const r of page.records) out.push(storedEvent(r, id))
    after = out.length
    if (!page.more) return out
  }
}

describe('a vouched segment', () => {
  it('serves every line of a released session as stored, without opening it', async () => {
    const store = fileStores.open({ root })
    const v = await store.readVouched(id)
    expect(v?.lines).toBe(40)
    expect(v?.more).toBe(false)
    expect(await all(v!)).toEqual(sent)
    expect(await v!.page(40)).toBeUndefined()
  })

  it('answers nothing for a session this store holds open', async () => {
    const store = fileStores.open({ root })
    await store.load(id)
    expect(await store.readVouched(id)).toBeUndefined()
  })

  it('answers nothing once a line is changed in place, even to the same length', async () => {
    const seg = readFileSync(join(dir(), SEGMENT_FILE), 'utf8')
    const at = seg.indexOf('"seq":7,"id":"') + '"seq":7,"id":"'.length
    const edited = `${seg.slice(0, at)}${seg[at] === 'X' ? 'Y' : 'X'}${seg.slice(at + 1)}`
    expect(edited.length).toBe(seg.length)
    writeFileSync(join(dir(), SEGMENT_FILE), edited)
    expect(await fileStores.open({ root }).readVouched(id)).toBeUndefined()
  })

  it('answers nothing when the segment is shorter than the checksum says', async () => {
    const seg = readFileSync(join(dir(), SEGMENT_FILE))
    writeFileSync(join(dir(), SEGMENT_FILE), seg.subarray(0, seg.length - 10))
    expect(await fileStores.open({ root }).readVouched(id)).toBeUndefined()
  })

  it('a store that opens the session (to append, or to repair it) drops the checksum: nothing stale is vouched for', async () => {
    const other = fileStores.open({ root })
    await other.append(sampleEvent(id, 41))
    expect(existsSync(join(dir(), SUM_FILE))).toBe(false)
    expect(await fileStores.open({ root }).readVouched(id)).toBeUndefined()
  })

  it('a page whose bytes changed after the checksum was checked is not served (the replay loads from there)', async () => {
    const v = await fileStores.open({ root }).readVouched(id)
    expect(v).toBeDefined()
    const seg = readFileSync(join(dir(), SEGMENT_FILE), 'utf8')
    const at = seg.indexOf('"seq":30,"id":"') + '"seq":30,"id":"'.length
    writeFileSync(join(dir(), SEGMENT_FILE), `${seg.slice(0, at)}${seg[at] === 'X' ? 'Y' : 'X'}${seg.slice(at + 1)}`)
    expect(await v!.page(0)).toBeUndefined()
    expect(await v!.page(35)).toBeUndefined()
  })

  it('the checksum of blocks combined is the checksum of the whole', () => {
    const crc32 = (zlib as { crc32?: (b: Uint8Array, c?: number) => number }).crc32
    if (!crc32) return
    for (const size of [1, 7, 1000, 65_537]) {
      const whole = randomBytes(size)
      for (const cut of [0, 1, Math.floor(size / 3), size - 1, size]) {
        const a = whole.subarray(0, cut)
        const b = whole.subarray(cut)
        expect(crc32Combine(crc32(a), crc32(b), b.length)).toBe(crc32(whole))
      }
    }
  })

  it('answers nothing for a damaged checksum file', async () => {
    appendFileSync(join(dir(), SUM_FILE), 'x')
    expect(await fileStores.open({ root }).readVouched(id)).toBeUndefined()
  })
})
