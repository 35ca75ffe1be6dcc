/**
 * Rendering abstract calls through the shipped outside-implementation profiles: the codex-acp
 * profile's write becomes an `apply_patch` patch whose added lines (`${addlines}`) rebuild the
 * content — line ends intact, nothing for empty content — and its read and run become
 * `shell_command` calls; every shipped profile parses.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseDirectives } from '../../../server/providers/directives.ts'
import { kitRoot } from '../paths.ts'
import { addLines, loadProfile, renderPrompt } from './profile.ts'

const profiles = join(kitRoot(), 'conformance', 'profiles')

describe('addLines', () => {
  it('prefixes each line with + and ends each with a newline; a final newline adds no empty line', () => {
    expect(addLines('')).toBe('')
    expect(addLines('one')).toBe('+one\n')
    expect(addLines('one\ntwo\n\nfour\n')).toBe('+one\n+two\n+\n+four\n')
    expect(addLines('\n')).toBe('+\n')
  })
})

describe('the codex-acp profile', () => {
  const rp = loadProfile(join(profiles, 'codex-acp.json'))
  const call = (line: Parameters<typeof renderPrompt>[0]) => parseDirectives(renderPrompt(line, rp, '/ws'))

  it('writes through apply_patch with an Add File patch', () => {
    expect(call([{ call: 'write', path: 'm.txt', content: 'one\n"two"\n' }])).toEqual([
      {
        kind: 'call',
        tool: 'apply_patch',
        args: { input: '*** Begin Patch\n*** Add File: m.txt\n+one\n+"two"\n*** End Patch\n' },
      },
    ])
    expect(call([{ call: 'write', path: 'empty.txt', content: '' }])).toEqual([
      {
        kind: 'call',
        tool: 'apply_patch',
        args: { input: '*** Begin Patch\n*** Add File: empty.txt\n*** End Patch\n' },
      },
    ])
  })

  it('reads and runs through shell_command', () => {
    expect(
      call([
        { call: 'read', path: 'dir/a b.txt' },
        { call: 'run', command: 'echo "$HOME"' },
      ]),
    ).toEqual([
      { kind: 'call', tool: 'shell_command', args: { command: "cat 'dir/a b.txt'" } },
      { kind: 'call', tool: 'shell_command', args: { command: 'echo "$HOME"' } },
    ])
  })
})

it('every shipped profile parses', () => {
  const files = readdirSync(profiles).filter((f) => f.endsWith('.json') && !f.includes('expected-failures'))
  expect(files.length).toBeGreaterThanOrEqual(3)
  for (const f of files) expect(() => loadProfile(join(profiles, f))).not.toThrow()
})
