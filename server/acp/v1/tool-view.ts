/**
 * How a Chimera tool call looks to an ACP v1 client: its title, its ToolKind, the files it
 * touches (absolute `locations`) and, for edits, a `diff` content block built from the call's
 * own arguments (Edit: old_string → new_string; Write: the old text the core read, → the new text). Pure functions of the call.
 */
import { isAbsolute, resolve } from 'node:path'
import type { z } from 'zod'
import type { ToolCallContentSchema, ToolKindSchema } from '../../../generated/acp/v1-schema.gen.ts'

export type ToolKind = z.input<typeof ToolKindSchema>
export type ToolContent = z.input<typeof ToolCallContentSchema>

const KINDS: Readonly<Record<string, ToolKind>> = {
  Read: 'read',
  Write: 'edit',
  Edit: 'edit',
  Bash: 'execute',
  Grep: 'search',
  Glob: 'search',
  LS: 'search',
  update_plan: 'think',
  open_file: 'read',
}

/** Tools whose result keeps the diff shown at the call (their completion sends no content). */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(['Write', 'Edit'])

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const abs = (cwd: string, p: string): string => (isAbsolute(p) ? p : resolve(cwd, p))

export function toolKind(tool: string): ToolKind {
  return Object.hasOwn(KINDS, tool) ? KINDS[tool]! : 'other'
}

export function toolTitle(tool: string, args: Record<string, unknown>): string {
  const path = str(args.path)
  switch (tool) {
    case 'Bash':
      return str(args.command)?.slice(0, 200) ?? 'Bash'
    case 'Grep':
    case 'Glob':
      return `${tool} ${str(args.pattern) ?? ''}`.trim()
    default:
      return path ? `${tool} ${path}` : tool
  }
}

export function toolLocations(cwd: string, args: Record<string, unknown>): { path: string; line?: number }[] {
  const path = str(args.path)
  if (!path) return []
  // Read's `offset`, open_file's `line`: a client following the agent reveals that line.
  const at = args.line ?? args.offset
  const line = typeof at === 'number' && Number.isInteger(at) && at >= 1 ? at : undefined
  return [line === undefined ? { path: abs(cwd, path) } : { path: abs(cwd, path), line }]
}

/**
 * The diff an edit call proposes, from its arguments (nothing for other tools). A Write shows
 * the text it replaces when the call's event carried it (`old_text`), else `oldText: null`.
 */
export function toolDiff(
  cwd: string,
  tool: string,
  args: Record<string, unknown>,
  oldText?: string | null,
): ToolContent[] {
  const path = str(args.path)
  if (!path) return []
  if (tool === 'Edit' && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
    return [{ type: 'diff', path: abs(cwd, path), oldText: args.old_string, newText: args.new_string }]
  }
  if (tool === 'Write' && typeof args.content === 'string')
    return [{ type: 'diff', path: abs(cwd, path), oldText: oldText ?? null, newText: args.content }]
  return []
}

export const textContent = (text: string): ToolContent => ({ type: 'content', content: { type: 'text', text } })
