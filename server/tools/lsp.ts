/**
 * The five LSP tools of docs/lsp.md — lsp_diagnostics, lsp_completion, lsp_rename, lsp_definition,
 * lsp_references — each its own tool with its own schema (specs/tools/tools.yaml) and
 * permission key. They consult a provider when they run (the one given to `lspTools`, else the
 * session's `ToolContext.lsp`), never throw, and report positions zero-based like LSP
 * (`path:line:character`). `data` carries the structured result.
 */
import type { Diagnostic, Location } from 'vscode-languageserver-protocol'
import type {
  lsp_completionInput,
  lsp_definitionInput,
  lsp_diagnosticsInput,
  lsp_referencesInput,
  lsp_renameInput,
} from '../../generated/tools/tools.gen.ts'
import type { LspProvider } from '../lsp/provider.ts'
import { fail, succeed } from './outcome.ts'
import { applyWorkspaceEdit } from './lsp-apply.ts'
import { lspFailure, prepare, resolvePosition, showUri, type Prepared } from './lsp-args.ts'
import { lexicalPath } from './paths.ts'
import type { Tool, ToolContext, ToolOutcome } from './types.ts'

const SEVERITY = ['', 'error', 'warning', 'info', 'hint'] as const
const KINDS = [
  '',
  'text',
  'method',
  'function',
  'constructor',
  'field',
  'variable',
  'class',
  'interface',
  'module',
  'property',
  'unit',
  'value',
  'enum',
  'keyword',
  'snippet',
  'color',
  'file',
  'reference',
  'folder',
  'enum member',
  'constant',
  'struct',
  'event',
  'operator',
  'type parameter',
] as const

type Positional = { path: string; position: lsp_definitionInput['position'] }

/** Prepare a positional call, resolve its position, run `fn`; LSP failures become tool errors. */
async function positional<A extends Positional>(
  tool: string,
  args: A,
  ctx: ToolContext,
  provider: LspProvider | undefined,
  fn: (p: Prepared, pos: { line: number; character: number }) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const prep = await prepare(tool, ctx, args.path, provider)
  if (!prep.ok) return prep.outcome
  const pos = resolvePosition(prep.p.text, args.position, prep.p.name)
  if (!pos.ok) return fail(pos.error)
  try {
    return await fn(prep.p, pos.position)
  } catch (e) {
    return lspFailure(e)
  }
}

function where(
  root: string,
  l: Location,
): { path: string; uri: string; line: number; character: number; range: Location['range'] } {
  return {
    path: showUri(root, l.uri),
    uri: l.uri,
    line: l.range.start.line,
    character: l.range.start.character,
    range: l.range,
  }
}

function diagnosticLine(name: string, d: Diagnostic): string {
  const code =
    d.code !== undefined ? ` ${d.source ?? ''}${d.source ? ' ' : ''}${d.code}` : d.source ? ` ${d.source}` : ''
  return `${name}:${d.range.start.line}:${d.range.start.character} ${SEVERITY[d.severity ?? 1] ?? 'error'}${code ? ` [${code.trim()}]` : ''}: ${d.message.split('\n')[0]}`
}

/** The five tools over `provider` (default: each call's `ToolContext.lsp`). */
export function lspTools(provider?: LspProvider): Tool[] {
  const diagnostics: Tool<lsp_diagnosticsInput> = {
    name: 'lsp_diagnostics',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    async run(args, ctx) {
      const prep = await prepare('lsp_diagnostics', ctx, args.path, provider)
      if (!prep.ok) return prep.outcome
      const { manager, abs, name } = prep.p
      try {
        const list = await manager.diagnostics(abs, ctx.signal)
        const items = list.map((d) => ({
          line: d.range.start.line,
          character: d.range.start.character,
          severity: SEVERITY[d.severity ?? 1] ?? 'error',
          message: d.message,
          code: d.code ?? null,
          source: d.source ?? null,
          range: d.range,
        }))
        const errors = items.filter((d) => d.severity === 'error').length
        const head =
          list.length === 0
            ? `No diagnostics in ${name}`
            : `${list.length} diagnostic${list.length === 1 ? '' : 's'} in ${name} (${errors} error${errors === 1 ? '' : 's'}; positions zero-based line:character)`
        return succeed([head, ...list.map((d) => diagnosticLine(name, d))].join('\n'), {
          path: name,
          count: items.length,
          errors,
          diagnostics: items,
        })
      } catch (e) {
        return lspFailure(e)
      }
    },
  }
  const completion: Tool<lsp_completionInput> = {
    name: 'lsp_completion',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    run: (args, ctx) =>
      positional('lsp_completion', args, ctx, provider, async ({ manager, abs, name }, pos) => {
        const all = await manager.completion(abs, pos, ctx.signal)
        const max = args.max_results ?? 50
        const sorted = [...all].sort((a, b) => (a.sortText ?? a.label).localeCompare(b.sortText ?? b.label))
        const items = sorted
          .slice(0, max)
          .map((c) => ({ label: c.label, kind: KINDS[c.kind ?? 0] || null, detail: c.detail ?? null }))
        const head = `${all.length} completion${all.length === 1 ? '' : 's'} at ${name}:${pos.line}:${pos.character}${all.length > max ? ` (first ${max})` : ''}`
        return succeed(
          [
            head,
            ...items.map((c) => `${c.label}${c.kind ? ` (${c.kind})` : ''}${c.detail ? ` — ${c.detail}` : ''}`),
          ].join('\n'),
          { path: name, position: pos, count: all.length, items, truncated: all.length > max },
        )
      }),
  }
  const definition: Tool<lsp_definitionInput> = {
    name: 'lsp_definition',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    run: (args, ctx) =>
      positional('lsp_definition', args, ctx, provider, async ({ manager, abs, name, root }, pos) => {
        const locs = (await manager.definition(abs, pos, ctx.signal)).map((l) => where(root, l))
        if (!locs.length)
          return succeed(`No definition found at ${name}:${pos.line}:${pos.character}`, {
            path: name,
            position: pos,
            definitions: [],
          })
        return succeed(
          [
            `Definition${locs.length === 1 ? '' : 's'} of the symbol at ${name}:${pos.line}:${pos.character} (zero-based line:character):`,
            ...locs.map((l) => `${l.path}:${l.line}:${l.character}`),
          ].join('\n'),
          { path: name, position: pos, definitions: locs },
        )
      }),
  }
  const references: Tool<lsp_referencesInput> = {
    name: 'lsp_references',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    run: (args, ctx) =>
      positional('lsp_references', args, ctx, provider, async ({ manager, abs, name, root }, pos) => {
        const all = (await manager.references(abs, pos, args.include_declaration ?? true, ctx.signal)).map((l) =>
          where(root, l),
        )
        const max = args.max_results ?? 500
        const shown = all.slice(0, max)
        const files = new Set(all.map((l) => l.path)).size
        const head = `${all.length} reference${all.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'} to the symbol at ${name}:${pos.line}:${pos.character}${all.length > max ? ` (first ${max})` : ''}`
        return succeed([head, ...shown.map((l) => `${l.path}:${l.line}:${l.character}`)].join('\n'), {
          path: name,
          position: pos,
          count: all.length,
          files,
          references: shown,
          truncated: all.length > max,
        })
      }),
  }
  const rename: Tool<lsp_renameInput> = {
    name: 'lsp_rename',
    permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
    run: (args, ctx) =>
      positional('lsp_rename', args, ctx, provider, async ({ manager, abs, name }, pos) => {
        const edit = await manager.rename(abs, pos, args.new_name, ctx.signal)
        if (!edit) return fail(`nothing to rename at ${name}:${pos.line}:${pos.character}`)
        const applied = await applyWorkspaceEdit('lsp_rename', ctx, edit)
        if (!applied.ok) return applied.outcome
        const files = applied.files
        // The server's copies of the changed files follow the disk again (opened now if they were
        // not: a server that does not watch the disk would otherwise keep the old names).
        for (const f of [{ abs }, ...files]) await manager.resync(f.abs).catch(() => {})
        const edits = files.reduce((n, f) => n + f.edits, 0)
        return succeed(
          `Renamed the symbol at ${name}:${pos.line}:${pos.character} to ${args.new_name}: ${edits} edit${edits === 1 ? '' : 's'} in ${files.length} file${files.length === 1 ? '' : 's'}${files.length ? `\n${files.map((f) => `${f.path} (${f.edits})`).join('\n')}` : ''}`,
          {
            path: name,
            position: pos,
            new_name: args.new_name,
            edits,
            files: files.map((f) => ({ path: f.path, edits: f.edits })),
          },
        )
      }),
  }
  return [diagnostics, completion, rename, definition, references]
}

/** The LSP tool names, in spec order. */
export const LSP_TOOL_NAMES = [
  'lsp_diagnostics',
  'lsp_completion',
  'lsp_rename',
  'lsp_definition',
  'lsp_references',
] as const
