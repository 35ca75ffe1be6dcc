/**
 * What the five LSP tools share before talking to a server: the manager from the provider
 * (`LSP not configured` when there is none), the file confined to the workspace like every file
 * tool (relative, absolute or `file://`), its text, and the position — `{line, character}` as
 * given, or a `{text, occurrence}` anchor turned into one (UTF-16 columns, the LSP convention).
 * Also the line-start table both positions and edits are computed with.
 */
import type { Position } from 'vscode-languageserver-protocol'
import { fileURLToPath } from 'node:url'
import { LspError, NOT_CONFIGURED } from '../lsp/errors.ts'
import type { LspManager } from '../lsp/manager.ts'
import type { LspProvider } from '../lsp/provider.ts'
import { errorText, fail } from './outcome.ts'
import { confinePath, displayPath, violation } from './paths.ts'
import { openGuard } from './safe-open.ts'
import { readTextFile } from './text-file.ts'
import type { ToolContext, ToolOutcome } from './types.ts'

export type PositionArg = { line: number; character: number } | { text: string; occurrence?: number }

export interface Prepared {
  manager: LspManager
  abs: string
  root: string
  name: string
  text: string
}

/** Offsets where each line of `text` starts (LSP line breaks: \n, \r\n, \r). */
export function lineStarts(text: string): number[] {
  const starts = [0]
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 13 && text.charCodeAt(i + 1) === 10) i++
    if (c === 10 || c === 13) starts.push(i + 1)
  }
  return starts
}

/** The offset of an LSP position in `text` (clamped to its line), or undefined past the end. */
export function offsetAt(text: string, starts: readonly number[], p: Position): number | undefined {
  const start = starts[p.line]
  if (start === undefined) return undefined
  const next = starts[p.line + 1]
  let end = next ?? text.length
  while (end > start && (text[end - 1] === '\n' || text[end - 1] === '\r') && next !== undefined) end--
  return Math.min(start + p.character, end)
}

/** The position of `offset` in `text`. */
export function positionAt(starts: readonly number[], offset: number): Position {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((starts[mid] as number) <= offset) lo = mid
    else hi = mid - 1
  }
  return { line: lo, character: offset - (starts[lo] as number) }
}

/** The position named by `arg` in `text`, or why it names none. */
export function resolvePosition(
  text: string,
  arg: PositionArg,
  name: string,
): { ok: true; position: Position } | { ok: false; error: string } {
  const starts = lineStarts(text)
  if ('line' in arg) {
    if (arg.line >= starts.length)
      return { ok: false, error: `line ${arg.line} is past the end of ${name} (${starts.length} lines, zero-based)` }
    return { ok: true, position: { line: arg.line, character: arg.character } }
  }
  const n = arg.occurrence ?? 1
  let at = -1
  for (let i = 0; i < n; i++) {
    at = text.indexOf(arg.text, at + 1)
    if (at < 0)
      return {
        ok: false,
        error:
          i === 0
            ? `"${arg.text}" does not occur in ${name}`
            : `"${arg.text}" occurs ${i} time${i === 1 ? '' : 's'} in ${name}, not ${n}`,
      }
  }
  return { ok: true, position: positionAt(starts, at) }
}

/** The provider, confinement and file text of an LSP tool call, or the outcome to return. */
export async function prepare(
  tool: string,
  ctx: ToolContext,
  path: string,
  provider?: LspProvider,
): Promise<{ ok: true; p: Prepared } | { ok: false; outcome: ToolOutcome }> {
  let manager: LspManager | undefined
  try {
    manager = (provider ?? ctx.lsp)?.()
  } catch (e) {
    return { ok: false, outcome: fail(`${NOT_CONFIGURED} (${errorText(e)})`) }
  }
  if (!manager) return { ok: false, outcome: fail(NOT_CONFIGURED) }
  const where = await confinePath(tool, ctx, path)
  if (!where.ok) return where
  const name = displayPath(where.root, where.abs)
  const file = await readTextFile(where.abs, name, await openGuard(ctx, where.root))
  if (!file.ok)
    return {
      ok: false,
      outcome: file.kind === 'violation' ? violation(tool, ctx, where.abs, file.error) : fail(file.error),
    }
  return { ok: true, p: { manager, abs: where.abs, root: where.root, name, text: file.text } }
}

/** The failed outcome of an error thrown by the LSP runtime (its message is the tool error). */
export function lspFailure(e: unknown): ToolOutcome {
  if (e instanceof LspError) return fail(e.message)
  return fail(`LSP server failed: ${errorText(e)}`)
}

/** A location URI as the model should see it: workspace-relative when inside, else absolute. */
export function showUri(root: string, uri: string): string {
  try {
    return uri.startsWith('file:') ? displayPath(root, fileURLToPath(uri)) : uri
  } catch {
    return uri
  }
}
