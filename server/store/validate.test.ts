/**
 * `eventProblem` (validate.ts) checks the data against its type's schema, then the rest of the
 * envelope: an event with valid data and a bad envelope field is still refused, by that field.
 */
import { describe, expect, it } from 'vitest'
import { sampleEvent, sampleMeta } from './fixtures/sample.ts'
import { builtEvent, eventProblem, validateEvent } from './validate.ts'

const id = sampleMeta('otter').session_id

describe('eventProblem', () => {
  it('accepts valid events of every sample type', () => {
    for (let seq = 1; seq <= 7; seq++) expect(eventProblem(sampleEvent(id, seq))).toBeUndefined()
  })

  it('refuses a bad envelope around valid data, naming the field', () => {
    const e = sampleEvent(id, 3)
    expect(eventProblem({ ...e, seq: 0 })).toMatch(/seq/)
    expect(eventProblem({ ...e, turn: -1 })).toMatch(/turn/)
    expect(eventProblem({ ...e, ts: 'yesterday' })).toMatch(/ts/)
    expect(eventProblem({ ...e, extra: true })).toMatch(/extra/)
    const { id: _, ...noId } = e
    expect(eventProblem(noId)).toMatch(/id/)
    expect(() => validateEvent({ ...e, seq: 1.5 })).toThrow(expect.objectContaining({ code: 'invalid_event' }))
  })

  it('refuses bad data and an unknown type', () => {
    const e = sampleEvent(id, 3, 'text_delta')
    expect(eventProblem({ ...e, data: { text: 1 } })).toMatch(/^data of a text_delta event/)
    expect(eventProblem({ ...e, type: 'no_such_type' })).toBeDefined()
    expect(eventProblem({ ...e, data: undefined })).toBeDefined()
  })
})

describe('events the event writer built', () => {
  it('are taken without a second check; the same event made anywhere else is checked in full', () => {
    // Never built so by the writer (its envelope is its own): here only the mark decides.
    const marked = { ...sampleEvent(id, 3), turn: -1 }
    expect(() => validateEvent({ ...marked })).toThrow(/turn/)
    expect(validateEvent(builtEvent(marked))).toBe(marked)
  })

  it('still refuse a session id that is not one', () => {
    expect(() => validateEvent(builtEvent({ ...sampleEvent(id, 3), session_id: '../x' }))).toThrow(/session id/)
  })
})
