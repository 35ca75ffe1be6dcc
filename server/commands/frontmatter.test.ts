/**
 * The YAML parser loads on demand (docs/decisions/0380-start-up-without-yaml-and-tools.md): a
 * session in a directory with command files waits for it before it takes prompts, one without
 * starts without it and loads it in the background; a block met before it is loaded is refused
 * with its own error, never misread.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CustomCommands } from './custom-commands.ts'
import {
  FrontmatterParserNotLoaded,
  frontmatterParserLoaded,
  loadFrontmatterParser,
  splitFrontmatter,
} from './frontmatter.ts'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-frontmatter-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe('the frontmatter parser on demand', () => {
  it('a file without a block needs no parser; a block before the parser is loaded is refused, then parsed', async () => {
    expect(frontmatterParserLoaded()).toBe(false)
    expect(splitFrontmatter('just a body')).toEqual({ front: {}, body: 'just a body' })
    expect(splitFrontmatter('---\nnot closed')).toBe('frontmatter is not closed (no second --- line)')
    expect(() => splitFrontmatter('---\ndescription: hi\n---\nbody')).toThrow(FrontmatterParserNotLoaded)
    // A session in a directory without command files starts without waiting; the parser follows.
    const none = new CustomCommands({ cwd: join(base, 'none'), userDir: join(base, 'no-user') })
    expect(none.prepare()).toBeUndefined()
    // One with a command directory waits for it before it takes prompts.
    mkdirSync(join(base, 'project', '.opencode', 'command'), { recursive: true })
    const waiting = new CustomCommands({ cwd: join(base, 'project'), userDir: join(base, 'no-user') }).prepare()
    expect(waiting).toBeInstanceOf(Promise)
    await waiting
    expect(frontmatterParserLoaded()).toBe(true)
    await loadFrontmatterParser()
    expect(splitFrontmatter('---\ndescription: hi\n---\nbody')).toEqual({ front: { description: 'hi' }, body: 'body' })
    expect(none.prepare()).toBeUndefined()
  })
})
