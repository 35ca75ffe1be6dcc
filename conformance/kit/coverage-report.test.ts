/**
 * The coverage report's own rules: SSE records count for the stream the transcript opened
 * last, and the "unreachable by a black-box client" list names real spec items that no
 * requirement touches (a stale entry fails here, so the list only shrinks).
 */
import { describe, expect, it } from 'vitest'
import { coverage, coverageText, touches } from './coverage/coverage.ts'
import { FAMILIES, specItems } from './coverage/items.ts'
import { UNREACHABLE } from './coverage/unreachable.ts'
import { loadCorpus, parseCorpusFile } from './corpus/load.ts'
import { corpusDirs } from './paths.ts'

const transcript = (steps: unknown[]): string =>
  [{ transcript: 1, title: 't', surface: 'sse', id: 'http.sse.x', section: 's', transports: ['http'] }, ...steps]
    .map((s) => JSON.stringify(s))
    .join('\n')

describe('the coverage report', () => {
  it('credits an SSE record to the stream opened last', () => {
    const e = parseCorpusFile(
      transcript([
        { open: { path: '/session/${sid}/events' } },
        { expect: { event: 'end' } },
        { open: { path: '/sessions/${sid}/events' } },
        { expect: { event: 'undo' } },
      ]),
      'x.jsonl',
      '.',
    )
    const t = touches(e)
    expect(t.has('sse event sessionEvents.end')).toBe(true)
    expect(t.has('sse event sessionsEvents.end')).toBe(false)
    expect(t.has('sse event sessionsEvents.undo')).toBe(true)
  })

  it('lists only real spec items as unreachable, none of which a requirement touches', () => {
    const items = specItems()
    const all = new Set(FAMILIES.flatMap((f) => (items.get(f) ?? []).map((n) => `${f} ${n}`)))
    for (const k of Object.keys(UNREACHABLE)) expect(all.has(k), k).toBe(true)
    const touched = new Set(loadCorpus(corpusDirs()).flatMap((e) => [...touches(e)]))
    for (const k of Object.keys(UNREACHABLE))
      expect(touched.has(k), `${k} is touched: remove it from unreachable.ts`).toBe(false)
  })

  it('reports unreachable items apart and never as covered', () => {
    const r = coverage(loadCorpus(corpusDirs()))
    const http = r.families.find((f) => f.family === 'http error')!
    expect(http.unreachable.map((u) => u.name)).toContain('internal_error')
    expect(http.untouched).not.toContain('internal_error')
    expect(http.covered + http.untouched.length + http.unreachable.length).toBe(http.total)
    expect(coverageText(r)).toMatch(/unreachable by a black-box client[^\n]*\n(?:.*\n)*\s+http error internal_error: /)
  })
})
