/**
 * FIFOs, sockets and device nodes in the workspace cannot hang a tool (a FIFO made
 * Grep and Write block forever; a /dev/zero node made Grep grow to 5 GB): Read, Write and Edit
 * refuse them with a clear error without blocking, Grep skips them in a directory search and
 * refuses one named explicitly, Glob and list_files leave them out. A writer-less FIFO would
 * block a plain open forever, so each call finishing at all is the proof.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { editTool } from './edit.ts'
import { globTool } from './glob.ts'
import { grepTool } from './grep.ts'
import { listFilesTool } from './list-files.ts'
import { readTool } from './read.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import { writeTool } from './write.ts'

const canMknod = process.getuid?.() === 0
let ws: TempWorkspace
let server: Server
const specials: string[] = ['fifo']
beforeEach(async () => {
  ws = tempWorkspace()
  ws.write({ 'a.txt': 'needle here\n' })
  expect(spawnSync('mkfifo', [join(ws.cwd, 'fifo')]).status).toBe(0)
  server = createServer()
  await new Promise<void>((r) => server.listen(join(ws.cwd, 'sock'), () => r()))
  if (!specials.includes('sock')) specials.push('sock')
  if (canMknod) {
    expect(spawnSync('mknod', [join(ws.cwd, 'zero'), 'c', '1', '5']).status).toBe(0)
    if (!specials.includes('zero')) specials.push('zero')
  }
})
afterEach(async () => {
  await new Promise<void>((r) => server.close(() => r()))
  ws.cleanup()
})

const ctx = () => recordingContext(ws.cwd)

describe('special files in the workspace', () => {
  it('Read refuses each without blocking', async () => {
    for (const name of specials) {
      const r = await readTool.run({ path: name }, ctx())
      expect(r, name).toEqual({
        ok: false,
        error: `${name} is not a regular file (a FIFO, socket or device); only regular files can be read or written`,
      })
    }
  })

  it('Write and Edit refuse each without blocking and leave it as it was', async () => {
    for (const name of specials) {
      const w = await writeTool.run({ path: name, content: 'x' }, ctx())
      expect(w, name).toEqual({
        ok: false,
        error: `${name} is not a regular file (a FIFO, socket or device); only regular files can be written`,
      })
      const e = await editTool.run({ replace_all: false, path: name, old_string: 'a', new_string: 'b' }, ctx())
      expect(e, name).toMatchObject({ ok: false, error: expect.stringContaining('is not a regular file') })
      expect(existsSync(join(ws.cwd, name))).toBe(true)
    }
  })

  it('Grep skips them in a directory search and refuses one named explicitly', async () => {
    const r = await grepTool.run({ case_insensitive: false, max_results: 200, pattern: 'needle|.' }, ctx())
    expect(r).toMatchObject({ ok: true, output: 'a.txt:1:needle here', data: { filesSearched: 1 } })
    for (const name of specials) {
      const one = await grepTool.run({ case_insensitive: false, max_results: 200, pattern: 'x', path: name }, ctx())
      expect(one, name).toEqual({
        ok: false,
        error: `${name} is not a regular file (a FIFO, socket or device); only regular files are searched`,
      })
    }
  })

  it('Glob and list_files leave them out', async () => {
    expect(await globTool.run({ max_results: 1000, pattern: '**' }, ctx())).toMatchObject({ ok: true, output: 'a.txt' })
    expect(await listFilesTool.run({ max_entries: 1000, recursive: true }, ctx())).toMatchObject({
      ok: true,
      output: 'a.txt',
    })
  })
})
