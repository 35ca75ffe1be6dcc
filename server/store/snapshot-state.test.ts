/**
 * The undo store's state.json on its own: runs of snap numbers written (version 2), version 1's
 * lists of ids read, commits that drop the redo branch, and stored states that are refused
 * rather than believed (out of order, beyond `next`, or claiming more snaps than any session has).
 */
import { describe, expect, it } from 'vitest'
import { MAX_SNAPS, committed, encodeState, freshState, isEmptySnap, parseState, snapNumber } from './snapshot-state.ts'

const v1 = (snaps: string[], extra: Record<string, unknown> = {}) => ({
  version: 1,
  next: snaps.length + 1,
  snaps,
  head: snaps.length,
  ...extra,
})

describe('state.json', () => {
  it('writes runs of consecutive snaps, and reads back what it wrote', () => {
    let st = freshState()
    for (const empty of [false, true, true, false, true]) st = committed(st, empty)
    expect(encodeState(st)).toEqual({
      version: 2,
      next: 6,
      head: 5,
      snaps: [[1, 5]],
      empty: [
        [2, 3],
        [5, 5],
      ],
    })
    expect(parseState(JSON.parse(JSON.stringify(encodeState(st))))).toEqual(st)
    expect([1, 2, 3, 4, 5].map((n) => isEmptySnap(st, n))).toEqual([false, true, true, false, true])
  })

  it('a commit after an undo drops the redo branch and the empty snaps in it', () => {
    let st = freshState()
    for (const empty of [true, false, true, true]) st = committed(st, empty)
    st = committed({ ...st, head: 2 }, true)
    expect(st).toEqual({ next: 6, snaps: [1, 2, 5], head: 3, empty: [1, 5] })
    expect(encodeState(st)).toMatchObject({
      snaps: [
        [1, 2],
        [5, 5],
      ],
      empty: [
        [1, 1],
        [5, 5],
      ],
    })
  })

  it('stays a few bytes long after thousands of turns', () => {
    let st = freshState()
    for (let i = 0; i < 5000; i++) st = committed(st, i % 1000 !== 0)
    const text = JSON.stringify(encodeState(st))
    expect(text.length).toBeLessThan(150)
    expect(parseState(JSON.parse(text)).snaps).toHaveLength(5000)
  })

  it('reads version 1 (every id listed), keeping which turns were empty', () => {
    const st = parseState(v1(['snap-000001', 'snap-000002', 'snap-000004'], { next: 5, empty: ['snap-000004'] }))
    expect(st).toEqual({ next: 5, snaps: [1, 2, 4], head: 3, empty: [4] })
    expect(encodeState(committed(st, false))).toMatchObject({
      version: 2,
      snaps: [
        [1, 2],
        [4, 5],
      ],
      empty: [[4, 4]],
    })
  })

  it('refuses what it would not have written', () => {
    const bad: [string, unknown][] = [
      ['another version', { ...v1([]), version: 3 }],
      ['a non-canonical id', v1(['snap-0000001'])],
      ['ids out of order', v1(['snap-000002', 'snap-000001'])],
      ['a snap at or past next', v1(['snap-000001'], { next: 1 })],
      ['an empty snap that is not listed', v1(['snap-000001'], { empty: ['snap-000002'] })],
      ['a head past the end', v1(['snap-000001'], { head: 2 })],
      ['a run past next', { version: 2, next: 3, head: 0, snaps: [[1, 3]] }],
      ['a reversed run', { version: 2, next: 9, head: 0, snaps: [[4, 2]] }],
      [
        'overlapping runs',
        {
          version: 2,
          next: 9,
          head: 0,
          snaps: [
            [1, 4],
            [3, 5],
          ],
        },
      ],
      ['a run from zero', { version: 2, next: 9, head: 0, snaps: [[0, 2]] }],
      ['a run that is not a pair', { version: 2, next: 9, head: 0, snaps: [[1, 2, 3]] }],
      ['a fractional run', { version: 2, next: 9, head: 0, snaps: [[1, 2.5]] }],
      ['a bad op', { version: 2, next: 2, head: 1, snaps: [[1, 1]], op: { kind: 'undo', from: 1, to: 5, nonce: 'x' } }],
    ]
    for (const [what, v] of bad) expect(() => parseState(v), what).toThrow(/state\.json/)
  })

  // A run is checked against what is left of MAX_SNAPS before it is expanded: 2^53 numbers would not fit.
  it('refuses a run claiming more snaps than any session has, without expanding it', () => {
    const next = Number.MAX_SAFE_INTEGER
    expect(() => parseState({ version: 2, next, head: 0, snaps: [[1, next - 1]] })).toThrow(/bad snaps/)
    expect(() =>
      parseState({
        version: 2,
        next,
        head: 0,
        snaps: [
          [1, (MAX_SNAPS * 6) / 10],
          [(MAX_SNAPS * 7) / 10, (MAX_SNAPS * 12) / 10],
        ],
      }),
    ).toThrow(/bad snaps/)
    // The cap itself is accepted.
    expect(parseState({ version: 2, next: MAX_SNAPS + 1, head: 0, snaps: [[1, MAX_SNAPS]] }).snaps).toHaveLength(
      MAX_SNAPS,
    )
  })

  it('names snap directories by number and back', () => {
    expect(snapNumber('snap-000042')).toBe(42)
    expect(snapNumber('snap-1234567')).toBe(1234567)
    for (const name of ['snap-42', 'snap-0000042', '.tmp-snap-000001-ab', 'snap-000000', 'snap-000001x'])
      expect(snapNumber(name), name).toBeUndefined()
  })
})
