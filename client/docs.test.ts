/** docs/client.md lists every export of the three package entries (it is the SDK's API list). */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const read = (p: string): string => readFileSync(new URL(`../${p}`, import.meta.url), 'utf8')

/** Names a module exports by its own declarations and `export { … }` lists (not `export *`). */
export function exportedNames(source: string): string[] {
  const names = new Set<string>()
  for (const m of source.matchAll(
    /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type)\s+([A-Za-z_$][\w$]*)/gm,
  ))
    names.add(m[1]!)
  for (const m of source.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const part of m[1]!.split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()!
        .trim()
      if (name) names.add(name)
    }
  }
  return [...names].sort()
}

describe('docs/client.md', () => {
  const doc = read('docs/client.md')
  for (const entry of ['client/index.ts', 'client/node/index.ts', 'client/msw/index.ts']) {
    it(`names every export of ${entry}`, () => {
      const names = exportedNames(read(entry))
      expect(names.length).toBeGreaterThan(3)
      expect(names.filter((n) => !doc.includes(`\`${n}\``))).toEqual([])
    })
  }

  it('the check can fail: a name that is not in the doc is reported', () => {
    expect(exportedNames('export const notDocumentedAnywhere = 1').filter((n) => !doc.includes(`\`${n}\``))).toContain(
      'notDocumentedAnywhere',
    )
  })
})
