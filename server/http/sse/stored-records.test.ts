/**
 * A replay sends stored records as they are (event-map.ts `pluralStored`, `singularStored`):
 * byte for byte what the record of the parsed event gives, on both wires, for every kind of
 * sample event.
 */
import { describe, expect, it } from 'vitest'
import type { AnyEvent } from '../../events/event-types.ts'
import { sampleEvent } from '../../store/fixtures/sample.ts'
import { storedRecords, type StoredText } from '../../store/stored-lines.ts'
import { encodeRecord } from './format.ts'
import { pluralRecord, pluralStored, singularRecord, singularStored, type StoredEncoder } from './event-map.ts'

const ID = 'ferret-20260425T120000Z-0f8fad5b-d9cb-469f-a165-70867728950e'
const writerForm = (e: AnyEvent): AnyEvent =>
  ({ seq: e.seq, id: e.id, session_id: e.session_id, type: e.type, turn: e.turn, ts: e.ts, data: e.data }) as AnyEvent

describe('stored records on the SSE wires', () => {
  const es = Array.from({ length: 14 }, (_, i) => writerForm(sampleEvent(ID, i + 1)))
  // Text beyond ASCII (bytes, not characters, are spliced) and a record larger than a chunk.
  const delta = es.find((e) => e.type === 'text_delta')!
  for (const text of ['h\u00e9llo \u2713 \ud83d\ude00 "quoted" \\ back', 'x'.repeat(200_000)])
    es.push({ ...delta, seq: es.length + 1, data: { ...delta.data, text } } as AnyEvent)
  const records = storedRecords(Buffer.from(es.map((e) => `${JSON.stringify(e)}\n`).join('')), 1, es.length, ID)!
  /** The bytes `encode` writes for `r`: into a buffer with no room first (it says how much it needs), then into one that size at an offset. */
  const encoded = (encode: StoredEncoder, r: StoredText): string => {
    const need = encode(r, Buffer.alloc(3), 1)
    expect(need).toBeLessThan(0)
    const out = Buffer.alloc(-need + 5)
    expect(encode(r, out, 5)).toBe(out.length)
    return out.toString('utf8', 5)
  }

  it('are kept as text', () => {
    expect(records.every((r) => r.kind === 'text')).toBe(true)
  })

  it('/sessions/{id}/events: the bytes of the event record', () => {
    for (const [k, r] of records.entries())
      if (r.kind === 'text') expect(encoded(pluralStored, r)).toBe(encodeRecord(pluralRecord(es[k]!)))
  })

  it('/session/{id}/events: the bytes of the event record', () => {
    for (const [k, r] of records.entries())
      if (r.kind === 'text') expect(encoded(singularStored, r)).toBe(encodeRecord(singularRecord(es[k]!)))
  })
})
