/**
 * `chimera --help` lists the subcommands from server/cli/subcommands.ts without loading them;
 * each description there is the loaded command's own, so the two cannot drift apart.
 */
import { describe, expect, it } from 'vitest'
import { SUBCOMMANDS } from './subcommands.ts'

describe('the top-level help table', () => {
  it.each(Object.keys(SUBCOMMANDS))('%s: its description is the command’s own', async (name) => {
    const cmd = await SUBCOMMANDS[name]!.load()
    const meta = typeof cmd.meta === 'function' ? await cmd.meta() : await cmd.meta
    expect(meta?.description).toBe(SUBCOMMANDS[name]!.description)
  })
})
