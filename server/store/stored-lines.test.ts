/**
 * Stored records read as text (stored-lines.ts): a line in the event writer's form is cut into
 * its JSON parts without being parsed; a line in another form is parsed; a line that is not
 * the record of its counter in its session makes the whole page fall back (undefined).
 */
import { describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import { sampleEvent } from './fixtures/sample.ts'
import { storedEvent, storedPart, storedRecords as fromBytes } from './stored-lines.ts'

const ID = 'otter-20260425T120000Z-0f8fad5b-d9cb-469f-a165-70867728950e'
/** The event in the writer's key order (event-writer.ts), as the store writes it. */
const writerForm = (e: AnyEvent): AnyEvent =>
  ({ seq: e.seq, id: e.id, session_id: e.session_id, type: e.type, turn: e.turn, ts: e.ts, data: e.data }) as AnyEvent
/** `storedRecords` of a page given as text. */
const storedRecords = (text: string, first: number, count: number, id: string) =>
  fromBytes(Buffer.from(text), first, count, id)
const lines = (es: AnyEvent[]): string => es.map((e) => `${JSON.stringify(e)}\n`).join('')
const events = (from: number, n: number): AnyEvent[] =>
  Array.from({ length: n }, (_, i) => writerForm(sampleEvent(ID, from + i)))

describe('storedRecords', () => {
  it('keeps writer-form lines as their JSON parts, which give back the event', () => {
    const es = events(3, 7)
    const got = storedRecords(lines(es), 3, 7, ID)!
    expect(got.map((r) => r.kind)).toEqual(Array(7).fill('text'))
    for (const [k, r] of got.entries()) {
      const e = es[k]!
      expect(
        r.kind === 'text' && [r.seq, r.type, r.turn, storedPart(r, 'id'), storedPart(r, 'ts'), storedPart(r, 'data')],
      ).toEqual([e.seq, e.type, e.turn, JSON.stringify(e.id), JSON.stringify(e.ts), JSON.stringify(e.data)])
      expect(storedEvent(r, ID)).toEqual(e)
    }
  })

  it("cuts lines at the segment's line ends when given them, and refuses ends that are not a line's", () => {
    const text = lines(events(5, 4))
    const page = Buffer.from(text)
    const ends: number[] = []
    // The file offsets after lines 1..8; the page holds lines 5..8, from offset 1000.
    for (let i = 0; i < 4; i++) ends.push(0)
    for (let i = page.indexOf(10); i >= 0; i = page.indexOf(10, i + 1)) ends.push(1000 + i + 1)
    const got = fromBytes(page, 5, 4, ID, { ends, base: 1000 })!
    expect(got.map((r) => storedEvent(r, ID))).toEqual(events(5, 4))
    expect(fromBytes(page, 5, 4, ID, { ends, base: 999 })).toBeUndefined()
    expect(fromBytes(page, 5, 4, ID, { ends: ends.map((e, i) => (i === 5 ? e + 1 : e)), base: 1000 })).toBeUndefined()
    expect(fromBytes(page, 5, 3, ID, { ends, base: 1000 })).toBeUndefined()
  })

  it('parses a line in another form (key order, spacing, escapes in the id)', () => {
    const other = sampleEvent(ID, 2) // seq, id, session_id, turn, ts, type, data
    const escaped = { ...writerForm(sampleEvent(ID, 3)), id: 'evt-"quoted"' } as AnyEvent
    const text = `${lines([writerForm(sampleEvent(ID, 1))])}${JSON.stringify(other, null, 1).replace(/\n/g, ' ')}\n${lines([escaped])}`
    const got = storedRecords(text, 1, 3, ID)!
    expect(got.map((r) => r.kind)).toEqual(['text', 'event', 'event'])
    expect(got.map((r) => storedEvent(r, ID))).toEqual([writerForm(sampleEvent(ID, 1)), other, escaped])
  })

  it('refuses the page when a line is torn, not JSON, out of sequence, of another session or type', () => {
    const good = lines(events(1, 3))
    expect(storedRecords(good.slice(0, -1), 1, 3, ID)).toBeUndefined() // torn: no last newline
    expect(storedRecords(good, 1, 4, ID)).toBeUndefined() // a line missing
    expect(storedRecords(`${good}{}\n`, 1, 3, ID)).toBeUndefined() // a line too many
    expect(storedRecords(good, 2, 3, ID)).toBeUndefined() // other counters
    expect(storedRecords(good, 1, 3, `${ID.slice(0, -1)}f`)).toBeUndefined() // another session's page
    // Past a page's first line the id is checked by its field's length and keys (the page is a
    // verified part of the session's segment): a line of another session is refused by those.
    const [, mid] = good.split('\n')
    const longer = mid!.replace(ID, `${ID}0`)
    const foreign = `${good.split('\n')[0]}\n${longer}\n${good.split('\n')[2]}\n`
    expect(storedRecords(foreign, 1, 3, ID)).toBeUndefined()
    expect(storedRecords(foreign.replace(`${ID}0`, ID), 1, 3, ID)).toHaveLength(3)
    const [a, b, c] = good.split('\n')
    expect(storedRecords(`${a}\n${b!.slice(0, -1)}\n${c}\n`, 1, 3, ID)).toBeUndefined() // not JSON (cut short)
    expect(storedRecords(`${a}\n${b!.slice(0, 40)}X${b!.slice(41)}\n${c}\n`, 1, 3, ID)).toBeUndefined()
    const unknown = { ...writerForm(sampleEvent(ID, 2)), type: 'no_such_type' }
    expect(storedRecords(`${a}\n${JSON.stringify(unknown)}\n${c}\n`, 1, 3, ID)).toBeUndefined()
  })
})
