/**
 * `isInside` (path-inside.ts) answers as `path.relative` says, whichever way it takes: random
 * absolute and relative paths with `.`, `..`, empty and dotted segments, and near-miss prefixes.
 */
import { isAbsolute, relative, sep } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isInside } from './path-inside.ts'

const byRelative = (root: string, abs: string): boolean => {
  const rel = relative(root, abs)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

const segment = fc.constantFrom('a', 'ab', 'b', 'a.', '.a', '.', '..', '', 'a b', '…')
const path = fc
  .tuple(fc.boolean(), fc.array(segment, { maxLength: 5 }), fc.boolean())
  .map(([absolute, segs, trailing]) => `${absolute ? '/' : ''}${segs.join('/')}${trailing ? '/' : ''}` || '/')

/** Absolute paths `relative` takes as they are: the ones isInside decides by their prefix. */
const plainPath = fc
  .array(fc.constantFrom('a', 'ab', 'b', 'a.', 'a b', '…', 'a\\b'), { maxLength: 5 })
  .map((segs) => `/${segs.join('/')}`)

describe('isInside', () => {
  it('answers as path.relative does for two plain absolute paths (its prefix test)', () => {
    fc.assert(
      fc.property(plainPath, plainPath, (root, abs) => {
        expect(isInside(root, abs)).toBe(byRelative(root, abs))
      }),
      { numRuns: 20_000 },
    )
  })

  it('answers as path.relative does for any two paths', () => {
    fc.assert(
      fc.property(path, path, (root, abs) => {
        expect(isInside(root, abs)).toBe(byRelative(root, abs))
      }),
      { numRuns: 20_000 },
    )
  })

  it('a sibling sharing a prefix is outside; the root itself and its children are inside', () => {
    expect(isInside('/w/ab', '/w/abc')).toBe(false)
    expect(isInside('/w/ab', '/w/ab')).toBe(true)
    expect(isInside('/w/ab', '/w/ab/c')).toBe(true)
    expect(isInside('/', '/etc')).toBe(true)
    expect(isInside('/w/ab', '/w/ab/../x')).toBe(false)
    expect(isInside('/w/ab', '/w/ab/./c')).toBe(true)
  })
})
