/** The docs test's reading of a page: which blocks, which markers, and how shown output matches. */
import { describe, expect, it } from 'vitest'
import { matchesShown, shellBlocks, splitConsole } from './blocks.ts'

const PAGE = [
  '```bash',
  'echo run',
  '```',
  '<!-- docs-test: skip needs Zed -->',
  '```sh',
  'zed .',
  '```',
  '<!-- docs-test: server -->',
  '```console',
  '$ curl -s http://127.0.0.1:5173/health \\',
  '    -H x:y',
  '{"status":"ok"}',
  '```',
  '```ts',
  'const notShell = 1',
  '```',
].join('\n')

describe('shellBlocks', () => {
  it('finds the shell blocks with their markers and skips other languages', () => {
    const b = shellBlocks('x.md', PAGE)
    expect(b.map((x) => [x.line, x.lang, x.skip, x.server])).toEqual([
      [1, 'bash', undefined, false],
      [5, 'sh', 'needs Zed', false],
      [9, 'console', undefined, true],
    ])
    expect(splitConsole(b[2]!.text)).toEqual({
      script: 'curl -s http://127.0.0.1:5173/health \\\n    -H x:y',
      expected: ['{"status":"ok"}'],
    })
  })
})

describe('matchesShown', () => {
  it('compares line by line; … stands for text on a line, a line of … for any lines', () => {
    expect(matchesShown(['a', 'b'], 'a\nb\n')).toBe(true)
    expect(matchesShown(['a', 'b'], 'a\nc\n')).toBe(false)
    expect(matchesShown(['a'], 'a\nextra\n')).toBe(false)
    expect(matchesShown(['{"id":"…"}'], '{"id":"x-1"}')).toBe(true)
    expect(matchesShown(['{"id":"…"}'], '{"id":"x-1"}\n{"id":"y"}')).toBe(false)
    expect(matchesShown(['first', '…', 'last'], 'first\n1\n2\nlast\n')).toBe(true)
    expect(matchesShown(['first', '…', 'last'], 'first\nlast\n')).toBe(true)
    expect(matchesShown(['a.c'], 'abc')).toBe(false)
  })
})
