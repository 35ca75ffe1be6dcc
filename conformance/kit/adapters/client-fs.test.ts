/** The kit's client file system: workspace-confined reads (line/limit) and writes, spec error codes. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { answerFs, insideWorkspace } from './client-fs.ts'

const ws = mkdtempSync(join(tmpdir(), 'kit-client-fs-'))
writeFileSync(join(ws, 'a.txt'), 'one\ntwo\nthree\n')
afterAll(() => rmSync(ws, { recursive: true, force: true }))

describe('the kit client file system', () => {
  it('reads a whole file, or a window of lines (1-based line, limit)', () => {
    expect(answerFs(ws, 'fs/read_text_file', { path: join(ws, 'a.txt') })).toEqual({
      result: { content: 'one\ntwo\nthree\n' },
    })
    expect(answerFs(ws, 'fs/read_text_file', { path: join(ws, 'a.txt'), line: 2, limit: 1 })).toEqual({
      result: { content: 'two\n' },
    })
    expect(answerFs(ws, 'fs/read_text_file', { path: join(ws, 'a.txt'), line: 3 })).toEqual({
      result: { content: 'three\n' },
    })
  })
  it('answers a missing file with -32002 and a bad window with -32602', () => {
    expect(answerFs(ws, 'fs/read_text_file', { path: join(ws, 'none.txt') })).toMatchObject({ error: { code: -32002 } })
    expect(answerFs(ws, 'fs/read_text_file', { path: join(ws, 'a.txt'), line: 0 })).toMatchObject({
      error: { code: -32602 },
    })
  })
  it('writes (creating directories) and refuses relative paths and paths outside the workspace', () => {
    expect(answerFs(ws, 'fs/write_text_file', { path: join(ws, 'd', 'b.txt'), content: 'x' })).toEqual({ result: {} })
    expect(readFileSync(join(ws, 'd', 'b.txt'), 'utf8')).toBe('x')
    expect(answerFs(ws, 'fs/write_text_file', { path: 'b.txt', content: 'x' })).toMatchObject({
      error: { code: -32602 },
    })
    expect(answerFs(ws, 'fs/write_text_file', { path: join(ws, '..', 'escape.txt'), content: 'x' })).toMatchObject({
      error: { code: -32602 },
    })
    expect(answerFs(ws, 'fs/write_text_file', { path: join(ws, 'c.txt') })).toMatchObject({ error: { code: -32602 } })
  })
  it('names a path relative to the workspace, or nothing outside it', () => {
    expect(insideWorkspace(ws, join(ws, 'd', 'b.txt'))).toBe('d/b.txt')
    expect(insideWorkspace(ws, ws)).toBeUndefined()
    expect(insideWorkspace(ws, `${ws}-other/x`)).toBeUndefined()
    expect(insideWorkspace(ws, 'rel.txt')).toBeUndefined()
  })
})
