/** parseSince: relative ages and ISO-8601 dates/date-times; everything else is a clear error. */
import { describe, expect, it } from 'vitest'
import { parseSince } from './since.ts'

const now = new Date('2026-04-25T12:00:00Z')
const iso = (v: string) => parseSince(v, now).toISOString()

describe('parseSince', () => {
  it('accepts Nd, Nh and Nm relative to now', () => {
    expect(iso('7d')).toBe('2026-04-18T12:00:00.000Z')
    expect(iso('1d')).toBe('2026-04-24T12:00:00.000Z')
    expect(iso('12h')).toBe('2026-04-25T00:00:00.000Z')
    expect(iso('30m')).toBe('2026-04-25T11:30:00.000Z')
    expect(iso('90m')).toBe('2026-04-25T10:30:00.000Z')
  })

  it('accepts ISO dates (UTC midnight) and date-times with or without an offset', () => {
    expect(iso('2026-04-01')).toBe('2026-04-01T00:00:00.000Z')
    expect(iso('2024-02-29')).toBe('2024-02-29T00:00:00.000Z')
    expect(iso('2026-04-01T10:20:30Z')).toBe('2026-04-01T10:20:30.000Z')
    expect(iso('2026-04-01T10:20:30.5Z')).toBe('2026-04-01T10:20:30.500Z')
    expect(iso('2026-04-01T10:20:30.123456789Z')).toBe('2026-04-01T10:20:30.123Z')
    expect(iso('2026-04-01T10:20')).toBe('2026-04-01T10:20:00.000Z')
    expect(iso('2026-04-01T10:20:30+02:00')).toBe('2026-04-01T08:20:30.000Z')
    expect(iso('2026-04-01T00:00:00-05:30')).toBe('2026-04-01T05:30:00.000Z')
    expect(iso('0050-01-01')).toBe('0050-01-01T00:00:00.000Z')
  })

  it.each([
    '',
    ' ',
    '7',
    'd',
    '0d',
    '-1d',
    '+1d',
    '1.5h',
    '7D',
    '7 d',
    ' 7d',
    '7d ',
    '3w',
    '10s',
    '1e3d',
    '0x10d',
    '99999999999999d',
    '2026-02-30',
    '2026-13-01',
    '2026-00-10',
    '2026-4-1',
    '26-04-01',
    '2026/04/01',
    '2026-04-01T',
    '2026-04-01T25:00',
    '2026-04-01T10:60',
    '2026-04-01T10:00:60',
    '2026-04-01 10:00',
    '2026-04-01T10:00+24:00',
    '2026-04-01T10:00+0200',
    'yesterday',
    'now',
    'all',
    'Sat, 25 Apr 2026 12:00:00 GMT',
    '1777118400',
  ])('rejects %j with a clear message', (v) => {
    expect(() => parseSince(v, now)).toThrow(/^invalid since value .*: expected Nd, Nh or Nm/)
  })

  it('defaults now to the current time', () => {
    const t = parseSince('1m').getTime()
    expect(Math.abs(Date.now() - 60_000 - t)).toBeLessThan(5_000)
  })
})
