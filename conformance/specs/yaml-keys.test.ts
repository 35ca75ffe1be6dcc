/**
 * A YAML flow mapping with an unquoted comma (`{ description: a, b }`) silently turns the text
 * after the comma into a key. No spec key legitimately contains whitespace, so any such key is
 * that mistake.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { describe, expect, it } from 'vitest'

const specs = fileURLToPath(new URL('../../specs', import.meta.url))
const files = (readdirSync(specs, { recursive: true }) as string[]).filter(
  (f) => f.endsWith('.yaml') && !f.includes('vendor'),
)

export function keysWithWhitespace(doc: unknown): string[] {
  const out: string[] = []
  const walk = (v: unknown, path: string, inExample: boolean): void => {
    if (!v || typeof v !== 'object') return
    for (const [k, x] of Object.entries(v)) {
      const ex = inExample || k === 'example' || k === 'examples'
      if (!ex && /\s/.test(k)) out.push(`${path}/${k}`)
      walk(x, `${path}/${k}`, ex)
    }
  }
  walk(doc, '', false)
  return out
}

describe('spec YAML', () => {
  for (const f of files) {
    it(`${f}: no key contains whitespace (an unquoted comma in a flow mapping)`, () => {
      expect(keysWithWhitespace(parse(readFileSync(join(specs, f), 'utf8')))).toEqual([])
    })
  }
  it('the check catches the mistake it is for', () => {
    expect(keysWithWhitespace(parse('a: { description: one, two three }'))).toEqual(['/a/two three'])
  })
})
