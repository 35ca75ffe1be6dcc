/**
 * Applying a server's WorkspaceEdit (lsp_rename): text edits by LSP positions (CRLF lines,
 * several edits per file, overlap refused), `changes` and `documentChanges`, file operations
 * refused, and confinement checked for every file before any is written (outside the workspace,
 * the read-only sandbox); the file tracker hears about each write.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import { applyTextEdits, applyWorkspaceEdit } from './lsp-apply.ts'
import { resolvePosition } from './lsp-args.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
})
afterEach(() => ws.cleanup())

const range = (l1: number, c1: number, l2: number, c2: number) => ({
  start: { line: l1, character: c1 },
  end: { line: l2, character: c2 },
})
const uri = (p: string) => pathToFileURL(p).href

describe('applyTextEdits', () => {
  it('applies several edits by position, CRLF lines included, whatever their order', () => {
    const text = 'let foo = 1\r\nfoo + foo\r\n'
    const r = applyTextEdits(text, [
      { range: range(1, 6, 1, 9), newText: 'bar' },
      { range: range(0, 4, 0, 7), newText: 'bar' },
      { range: range(1, 0, 1, 3), newText: 'bar' },
    ])
    expect(r).toEqual({ ok: true, text: 'let bar = 1\r\nbar + bar\r\n' })
  })

  it('refuses overlapping edits and edits past the end', () => {
    expect(
      applyTextEdits('abcdef', [
        { range: range(0, 0, 0, 4), newText: 'x' },
        { range: range(0, 2, 0, 5), newText: 'y' },
      ]),
    ).toEqual({ ok: false, error: 'the server sent overlapping edits' })
    expect(applyTextEdits('abc\n', [{ range: range(5, 0, 5, 1), newText: 'x' }])).toMatchObject({
      ok: false,
      error: expect.stringContaining('outside the file'),
    })
  })
})

describe('anchors', () => {
  it('the Nth occurrence of the text, as a zero-based UTF-16 position', () => {
    const text = 'const é = "add"\nadd(1)\n  add(2)\n'
    expect(resolvePosition(text, { text: 'add' }, 'f')).toEqual({ ok: true, position: { line: 0, character: 11 } })
    expect(resolvePosition(text, { text: 'add', occurrence: 3 }, 'f')).toEqual({
      ok: true,
      position: { line: 2, character: 2 },
    })
    expect(resolvePosition('😀x', { text: 'x' }, 'f')).toEqual({ ok: true, position: { line: 0, character: 2 } })
  })
})

describe('applyWorkspaceEdit', () => {
  it('writes every file of `changes` and `documentChanges`, telling the tracker before and after', async () => {
    ws.write({ 'a.ts': 'foo\n', 'b.ts': 'x(foo)\n' })
    const ctx = recordingContext(ws.cwd)
    const a = join(ws.cwd, 'a.ts')
    const b = join(ws.cwd, 'b.ts')
    const r = await applyWorkspaceEdit('lsp_rename', ctx, {
      documentChanges: [
        { textDocument: { uri: uri(a), version: 1 }, edits: [{ range: range(0, 0, 0, 3), newText: 'bar' }] },
        { textDocument: { uri: uri(b), version: 1 }, edits: [{ range: range(0, 2, 0, 5), newText: 'bar' }] },
      ],
    })
    expect(r).toMatchObject({
      ok: true,
      files: [
        { path: 'a.ts', edits: 1 },
        { path: 'b.ts', edits: 1 },
      ],
    })
    expect([readFileSync(a, 'utf8'), readFileSync(b, 'utf8')]).toEqual(['bar\n', 'x(bar)\n'])
    expect(ctx.fileEvents).toEqual([`will ${a}`, `changed ${a}`, `will ${b}`, `changed ${b}`])
    const again = await applyWorkspaceEdit('lsp_rename', ctx, {
      changes: { [uri(a)]: [{ range: range(0, 0, 0, 3), newText: 'baz' }] },
    })
    expect(again).toMatchObject({ ok: true, files: [{ path: 'a.ts', edits: 1 }] })
    expect(readFileSync(a, 'utf8')).toBe('baz\n')
  })

  it('a file outside the workspace stops the whole edit before anything is written', async () => {
    ws.write({ 'a.ts': 'foo\n' })
    const outside = join(ws.outside, 'o.ts')
    writeFileSync(outside, 'foo\n')
    const ctx = recordingContext(ws.cwd)
    const r = await applyWorkspaceEdit('lsp_rename', ctx, {
      changes: {
        [uri(join(ws.cwd, 'a.ts'))]: [{ range: range(0, 0, 0, 3), newText: 'bar' }],
        [uri(outside)]: [{ range: range(0, 0, 0, 3), newText: 'bar' }],
      },
    })
    expect(r).toMatchObject({
      ok: false,
      outcome: { ok: false, error: expect.stringContaining('outside the workspace') },
    })
    expect([readFileSync(join(ws.cwd, 'a.ts'), 'utf8'), readFileSync(outside, 'utf8')]).toEqual(['foo\n', 'foo\n'])
    expect(ctx.fileEvents).toEqual([])
    expect(ctx.violations).toHaveLength(1)
  })

  it('the read-only sandbox refuses, and file operations are refused rather than half-applied', async () => {
    ws.write({ 'a.ts': 'foo\n' })
    const a = uri(join(ws.cwd, 'a.ts'))
    const ro = await applyWorkspaceEdit('lsp_rename', recordingContext(ws.cwd, 'read-only'), {
      changes: { [a]: [{ range: range(0, 0, 0, 3), newText: 'bar' }] },
    })
    expect(ro).toMatchObject({ ok: false, outcome: { error: expect.stringContaining('read-only') } })
    const ops = await applyWorkspaceEdit('lsp_rename', recordingContext(ws.cwd), {
      documentChanges: [{ kind: 'rename', oldUri: a, newUri: uri(join(ws.cwd, 'b.ts')) }],
    })
    expect(ops).toMatchObject({
      ok: false,
      outcome: { error: 'the rename needs a file operation (rename), which lsp_rename does not apply' },
    })
    expect(readFileSync(join(ws.cwd, 'a.ts'), 'utf8')).toBe('foo\n')
  })
})
