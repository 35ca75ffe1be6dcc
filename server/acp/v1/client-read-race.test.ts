/**
 * Reads through an ACP client are pinned (docs/decisions/0220-acp-client-reads-pinned.md): the
 * editor opens the path itself, after the check, and follows symlinks, so a directory swapped
 * for a symlink to outside made it answer with an outside file. Here the "editor" answers
 * `fs/read_text_file` as a real one does (reads the path from disk, a moment later):
 * - with the swap at the worst moment (between the check and the editor's open, undone after it),
 *   200 Reads and 50 Edits: 0 leaks (the old code leaked every time);
 * - while a helper swaps `ws/d` with a symlink to outside in a loop (swap-helper.ts), 200 Reads
 *   and 50 Edits: 0 leaks, the outside file untouched.
 */
import { mkdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setImmediate as tick } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Connection } from '../../../client/wire/jsonrpc/connection.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from '../../tools/fixtures/workspace.ts'
import { prepareSwapper, startSwapper, type Swapper, type SwapperKind } from '../../tools/swap-helper.ts'
import { clientTools } from './client-tools.ts'

const kind: SwapperKind = prepareSwapper()
const TRIES = 200

let ws: TempWorkspace
let swapper: Swapper | undefined
beforeAll(async () => {
  ws = tempWorkspace()
  mkdirSync(join(ws.cwd, 'd'))
  writeFileSync(join(ws.cwd, 'd', 'f.txt'), 'inside needle\n')
  writeFileSync(join(ws.outside, 'f.txt'), 'OUTSIDE SECRET needle\n')
  symlinkSync(ws.outside, join(ws.cwd, 'swap'))
})
afterAll(async () => {
  await swapper?.stop()
  if (kind.ok) kind.cleanup()
  ws.cleanup()
})

/** Set: the editor's hop swaps `ws/d` for a symlink to outside before it reads, and back after. */
let swapInHop = false

/** An editor with no open buffers: reads and writes the path on disk, following links, after an IPC hop. */
const editor = {
  async request(method: string, params: { path: string; content?: string }): Promise<unknown> {
    await tick()
    if (swapInHop) {
      const d = join(ws.cwd, 'd')
      renameSync(d, join(ws.cwd, 'd.real'))
      symlinkSync(ws.outside, d)
      try {
        if (method === 'fs/read_text_file') return { content: await readFile(params.path, 'utf8') }
        throw new Error(`unexpected ${method} during the swap`)
      } finally {
        unlinkSync(d)
        renameSync(join(ws.cwd, 'd.real'), d)
      }
    }
    if (method === 'fs/read_text_file') return { content: await readFile(params.path, 'utf8') }
    if (method === 'fs/write_text_file') {
      // Writes are not under test here: the model's Edit target stays put (recorded, not written).
      writes.push(params.path)
      return {}
    }
    throw new Error(`unexpected ${method}`)
  },
} as unknown as Connection
const writes: string[] = []

describe('ACP client reads with the swap at the worst moment', () => {
  it(`${TRIES} Reads and 50 Edits: the editor always meets the link, no outside text reaches the model`, async () => {
    const tools = clientTools(editor, 'sess', { readTextFile: true, writeTextFile: true })
    const ctx = recordingContext(ws.cwd)
    let leaks = 0
    let noted = 0
    swapInHop = true
    try {
      for (let i = 0; i < TRIES; i++) {
        const r = await tools.get('Read')!.run({ path: 'd/f.txt' }, ctx)
        expect(r.ok).toBe(true)
        if (r.ok && r.output.includes('OUTSIDE')) leaks++
        if (r.ok && r.output.includes('differs from the file on disk')) noted++
        if (i % 4 === 0) {
          const e = await tools
            .get('Edit')!
            .run({ replace_all: false, path: 'd/f.txt', old_string: 'needle', new_string: 'NEEDLE' }, ctx)
          expect(e.ok).toBe(false)
          if (!e.ok && e.error.includes('OUTSIDE')) leaks++
        }
      }
    } finally {
      swapInHop = false
    }
    expect(leaks).toBe(0)
    expect(noted).toBe(TRIES)
    expect(writes).toEqual([])
    expect(readFileSync(join(ws.cwd, 'd', 'f.txt'), 'utf8')).toBe('inside needle\n')
  })
})

describe.skipIf(!kind.ok)(`ACP client reads under a rename race${kind.ok ? '' : ` (skipped: ${kind.reason})`}`, () => {
  it(`${TRIES} Reads and 50 Edits through the client while d flips to a symlink to outside: 0 leaks`, async () => {
    swapper = await startSwapper(kind as { command: string[] }, join(ws.cwd, 'd'), join(ws.cwd, 'swap'), 120)
    const tools = clientTools(editor, 'sess', { readTextFile: true, writeTextFile: true })
    const read = tools.get('Read')!
    const edit = tools.get('Edit')!
    const ctx = recordingContext(ws.cwd)
    let ok = 0
    let viaClient = 0
    let leaks = 0
    for (let i = 0; i < TRIES; i++) {
      const r = await read.run({ path: 'd/f.txt' }, ctx)
      if (r.ok) {
        ok++
        if ((r.data as { via?: string }).via === 'client') viaClient++
        if (r.output.includes('OUTSIDE')) leaks++
      } else if (r.error.includes('OUTSIDE')) leaks++
      if (i % 4 === 0) {
        const e = await edit.run(
          { replace_all: false, path: 'd/f.txt', old_string: 'SECRET', new_string: 'public' },
          ctx,
        )
        if (e.ok) leaks++ // only the outside file has "SECRET": an Edit that found it read outside
      }
    }
    await swapper?.stop()
    console.log(`client read race: reads ok ${ok}/${TRIES}, editor agreed ${viaClient}, leaks ${leaks}`)
    expect(leaks).toBe(0)
    expect(readFileSync(join(ws.outside, 'f.txt'), 'utf8')).toBe('OUTSIDE SECRET needle\n')
    // The race really ran: calls met the link.
    expect(ctx.violations.length).toBeGreaterThan(0)
  }, 60_000)
})
