/**
 * A replay sends stored records as they are (event-map.ts `pluralStored`, `singularStored`):
 * byte for byte what the record of the parsed event gives, on both wires, for every kind of
 * sample event.
 */
import { describe, expect, it } from 'vitest'
import type { AnyEvent } from '../../events/event-types.ts'
import { sampleEvent } from '../../store/fixtures/sample.ts'
import { storedRecords } from '../../store/stored-lines.ts'
import { encodeRecord } from './format.ts'
import { pluralRecord, pluralStored, singularRecord, singularStored } from './event-map.ts'

const ID = 'ferret-20260425T120000Z-0f8fad5b-d9cb-469f-a165-70867728950e'
const writerForm = (e: AnyEvent): AnyEvent =>
  ({ seq: e.seq, id: e.id, session_id: e.session_id, type: e.type, turn: e.turn, ts: e.ts, data: e.data }) as AnyEvent

describe('stored records on the SSE wires', () => {
  const es = Array.from({ length: 14 }, (_, i) => writerForm(sampleEvent(ID, i + 1)))
  const records = storedRecords(es.map((e) => `${JSON.stringify(e)}\n`).join(''), 1, es.length, ID)!

  it('are kept as text', () => {
    expect(records.every((r) => r.kind === 'text')).toBe(true)
  })

  it('/sessions/{id}/events: the bytes of the event record', () => {
    for (const [k, r] of records.entries())
      if (r.kind === 'text') expect(pluralStored(r)).toBe(encodeRecord(pluralRecord(es[k]!)))
  })

  it('/session/{id}/events: the bytes of the event record', () => {
    for (const [k, r] of records.entries())
      if (r.kind === 'text') expect(singularStored(r)).toBe(encodeRecord(singularRecord(es[k]!)))
  })
})
