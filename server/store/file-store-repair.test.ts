/**
 * FileEventStore repair: a damaged record ends the log. It and every record after it move to
 * `quarantine/`, `load` reports `repaired`, and appends continue after the last good seq.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLogger } from '../log.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { eventFileName } from './paths.ts'
import { SEGMENT_FILE } from './segment.ts'
import { openedStores } from './fixtures/stores.ts'

const fileStores = openedStores()
afterEach(() => fileStores.closeAll())

let tmp: string
let root: string
let id: string
const logLines: string[] = []
const fresh = () => fileStores.open({ root, logger: createLogger({ sink: (l) => logLines.push(l) }) })
const write = (name: string, text: string) => writeFileSync(join(root, id, name), text)
const jsonOf = (seq: number) => `${JSON.stringify(sampleEvent(id, seq, 'text_delta'))}\n`
const nameOf = (seq: number, type: 'text_delta' | 'usage' = 'text_delta') => eventFileName(seq, type)

/** Every file under the session's quarantine folder. */
function quarantined(): string[] {
  const q = join(root, id, 'quarantine')
  if (!existsSync(q)) return []
  return readdirSync(q)
    .flatMap((d) => readdirSync(join(q, d)))
    .sort()
}

beforeEach(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'chimera-repair-'))
  root = join(tmp, 'eventlog')
  logLines.length = 0
  const store = fresh()
  const meta = sampleMeta('ferret')
  id = meta.session_id
  await store.create(meta, sampleSummary(meta))
  for (let seq = 1; seq <= 5; seq++) await store.append(sampleEvent(id, seq, 'text_delta'))
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

/** Load with a fresh store: expect events 1..good, the named files quarantined, and append good+1 to work. */
async function expectRepaired(good: number, dropped: string[]): Promise<void> {
  const store = fresh()
  const loaded = await store.load(id)
  expect(loaded?.repaired).toBe(true)
  expect(loaded?.events.map((e) => e.seq)).toEqual(Array.from({ length: good }, (_, i) => i + 1))
  expect(quarantined()).toEqual([...dropped].sort())
  for (const n of dropped) expect(existsSync(join(root, id, n))).toBe(false)
  expect(logLines.some((l) => l.includes('event log repaired'))).toBe(true)
  await store.append(sampleEvent(id, good + 1, 'usage'))
  const again = await fresh().load(id)
  expect(again?.repaired).toBe(false)
  expect(again?.events.map((e) => e.seq)).toEqual(Array.from({ length: good + 1 }, (_, i) => i + 1))
}

describe('FileEventStore torn tail', () => {
  it('drops garbage as the last record', async () => {
    write(nameOf(6), 'garbage\n')
    await expectRepaired(5, [nameOf(6)])
  })

  it('drops an empty last file (crash between create and write)', async () => {
    write(nameOf(6), '')
    await expectRepaired(5, [nameOf(6)])
  })

  it('drops truncated JSON', async () => {
    const full = jsonOf(6)
    write(nameOf(6), full.slice(0, Math.floor(full.length / 2)))
    await expectRepaired(5, [nameOf(6)])
  })

  it('drops complete JSON that lacks its newline', async () => {
    write(nameOf(6), jsonOf(6).trimEnd())
    await expectRepaired(5, [nameOf(6)])
  })

  it('drops a record whose content seq differs from its name', async () => {
    write(nameOf(6), jsonOf(7))
    await expectRepaired(5, [nameOf(6)])
  })

  it('drops a record whose file name carries the wrong type', async () => {
    write(nameOf(6, 'usage'), jsonOf(6))
    await expectRepaired(5, [nameOf(6, 'usage')])
  })

  it('drops a record that is JSON but not a valid event', async () => {
    write(nameOf(6), `${JSON.stringify({ ...sampleEvent(id, 6, 'text_delta'), data: { text: 1 } })}\n`)
    await expectRepaired(5, [nameOf(6)])
  })

  it('ends the log at a gap', async () => {
    write(nameOf(7), jsonOf(7))
    await expectRepaired(5, [nameOf(7)])
  })

  it('ends the log at a duplicate counter', async () => {
    write(nameOf(5, 'usage'), `${JSON.stringify(sampleEvent(id, 5, 'usage'))}\n`)
    await expectRepaired(5, [nameOf(5, 'usage')])
  })

  it('drops a damaged middle record and everything after it', async () => {
    write(nameOf(6), jsonOf(6))
    write(nameOf(3), jsonOf(3).slice(0, 10))
    // A record rewritten in place is only re-read once no segment line vouches for it
    // (docs/decisions/0130-event-segment.md: whoever edits event files removes events.jsonl).
    unlinkSync(join(root, id, SEGMENT_FILE))
    await expectRepaired(2, [nameOf(3), nameOf(4), nameOf(5), nameOf(6)])
  })

  it('quarantines misnamed event files but keeps a valid log', async () => {
    write('event-abc.json', 'x')
    write('event-6-text_delta.json', jsonOf(6))
    await expectRepaired(5, ['event-abc.json', 'event-6-text_delta.json'])
  })

  it('repairs on the first append after a restart, without load', async () => {
    write(nameOf(6), '{"seq":')
    const store = fresh()
    await expect(store.append(sampleEvent(id, 7, 'text_delta'))).rejects.toMatchObject({ code: 'seq_mismatch' })
    await store.append(sampleEvent(id, 6, 'text_delta'))
    expect(readFileSync(join(root, id, nameOf(6)), 'utf8')).toBe(jsonOf(6))
    expect(quarantined()).toEqual([nameOf(6)])
    expect((await fresh().read(id, 4)).map((e) => e.seq)).toEqual([5, 6])
  })

  it('keeps every quarantined copy across repeated repairs', async () => {
    write(nameOf(6), 'first')
    expect((await fresh().load(id))?.repaired).toBe(true)
    write(nameOf(6), 'second')
    expect((await fresh().load(id))?.repaired).toBe(true)
    expect(quarantined()).toEqual([nameOf(6), nameOf(6)])
  })
})

describe('FileEventStore damaged session files', () => {
  it('treats a session without a readable session.json as absent, never throwing', async () => {
    writeFileSync(join(root, id, 'session.json'), '{"session_id":')
    expect(await fresh().load(id)).toBeUndefined()
    unlinkSync(join(root, id, 'session.json'))
    expect(await fresh().load(id)).toBeUndefined()
    expect(await fresh().list()).toMatchObject([{ session_id: id }])
  })

  it('rebuilds a missing summary.json from meta', async () => {
    unlinkSync(join(root, id, 'summary.json'))
    const loaded = await fresh().load(id)
    expect(loaded?.repaired).toBe(false)
    expect(loaded?.summary).toMatchObject({
      session_id: id,
      model: 'offline-echo',
      working_dir: '/tmp/work',
      event_count: 5,
    })
    expect(existsSync(join(root, id, 'summary.json'))).toBe(true)
  })
})
