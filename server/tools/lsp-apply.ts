/**
 * Applying a language server's `WorkspaceEdit` (lsp_rename) the way Edit changes files: every
 * target is confined to the workspace for writing before any file is touched, each file is
 * opened once through safe-open.ts, and the file-change tracker hears about each write before
 * and after (undo snapshots, `file_edit` diffs). Resource operations (create, rename, delete
 * files) are refused: a rename that needs them is reported, not half-applied.
 */
import { fileURLToPath } from 'node:url'
import type { TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol'
import { errorText, fail } from './outcome.ts'
import { lineStarts, offsetAt } from './lsp-args.ts'
import { confinePath, displayPath } from './paths.ts'
import { openGuard, openVerified, overwrite } from './safe-open.ts'
import { openFailureText, readTextFrom } from './text-file.ts'
import type { ToolContext, ToolOutcome } from './types.ts'

export interface AppliedFile {
  path: string
  abs: string
  edits: number
}

/** The text edits of `edit` per file URI, or why they cannot be applied. */
export function editsByUri(
  edit: WorkspaceEdit,
): { ok: true; byUri: Map<string, TextEdit[]> } | { ok: false; error: string } {
  const byUri = new Map<string, TextEdit[]>()
  const add = (uri: string, edits: readonly TextEdit[]): void => {
    byUri.set(uri, [...(byUri.get(uri) ?? []), ...edits])
  }
  for (const change of edit.documentChanges ?? []) {
    if (!('textDocument' in change))
      return {
        ok: false,
        error: `the rename needs a file operation (${(change as { kind?: string }).kind ?? 'unknown'}), which lsp_rename does not apply`,
      }
    add(
      change.textDocument.uri,
      change.edits.filter((e): e is TextEdit => 'range' in e),
    )
  }
  if (!edit.documentChanges) for (const [uri, edits] of Object.entries(edit.changes ?? {})) add(uri, edits)
  return { ok: true, byUri }
}

/** `text` with `edits` applied (non-overlapping, as LSP requires), or why not. */
export function applyTextEdits(
  text: string,
  edits: readonly TextEdit[],
): { ok: true; text: string } | { ok: false; error: string } {
  const starts = lineStarts(text)
  const spans: { from: number; to: number; newText: string; order: number }[] = []
  for (const [order, e] of edits.entries()) {
    const from = offsetAt(text, starts, e.range.start)
    const to = offsetAt(text, starts, e.range.end)
    if (from === undefined || to === undefined || to < from)
      return { ok: false, error: 'an edit lies outside the file (it changed since the server saw it?)' }
    spans.push({ from, to, newText: e.newText, order })
  }
  spans.sort((a, b) => b.from - a.from || b.order - a.order)
  let out = text
  let limit = Infinity
  for (const s of spans) {
    if (s.to > limit) return { ok: false, error: 'the server sent overlapping edits' }
    out = out.slice(0, s.from) + s.newText + out.slice(s.to)
    limit = s.from
  }
  return { ok: true, text: out }
}

/** Apply `edit` to the workspace of `ctx`; the files changed, or the outcome to report. */
export async function applyWorkspaceEdit(
  tool: string,
  ctx: ToolContext,
  edit: WorkspaceEdit,
): Promise<{ ok: true; files: AppliedFile[] } | { ok: false; outcome: ToolOutcome }> {
  const split = editsByUri(edit)
  if (!split.ok) return { ok: false, outcome: fail(split.error) }
  const targets: { abs: string; root: string; edits: TextEdit[] }[] = []
  for (const [uri, edits] of split.byUri) {
    let path: string
    try {
      path = fileURLToPath(uri)
    } catch {
      return { ok: false, outcome: fail(`the rename touches ${uri}, which is not a file`) }
    }
    // Every file is checked before any is written: a rename never half-escapes the workspace.
    const where = await confinePath(tool, ctx, path, { forWrite: true })
    if (!where.ok) return where
    if (edits.length) targets.push({ abs: where.abs, root: where.root, edits })
  }
  const files: AppliedFile[] = []
  for (const t of targets) {
    const name = displayPath(t.root, t.abs)
    const opened = await openVerified(t.abs, await openGuard(ctx, t.root), 'update')
    if (!opened.ok) return { ok: false, outcome: fail(`${openFailureText(opened, name).error}${done(files)}`) }
    try {
      const file = await readTextFrom(opened.fh, opened.size, name)
      if (!file.ok) return { ok: false, outcome: fail(`${file.error}${done(files)}`) }
      const next = applyTextEdits(file.text, t.edits)
      if (!next.ok)
        return { ok: false, outcome: fail(`cannot apply the rename to ${name}: ${next.error}${done(files)}`) }
      if (next.text === file.text) continue
      await ctx.files.willChange(t.abs)
      try {
        await overwrite(opened.fh, Buffer.from(next.text, 'utf8'))
      } catch (e) {
        return { ok: false, outcome: fail(`cannot write ${name}: ${errorText(e)}${done(files)}`) }
      } finally {
        await ctx.files.changed(t.abs)
      }
      files.push({ path: name, abs: t.abs, edits: t.edits.length })
    } finally {
      await opened.fh.close().catch(() => {})
    }
  }
  return { ok: true, files }
}

function done(files: readonly AppliedFile[]): string {
  return files.length ? ` (already changed: ${files.map((f) => f.path).join(', ')})` : ''
}
