/**
 * A session's tools: the built-ins, the substitutes a transport installs (an ACP client's file
 * system or terminal), the extra tools with their own contracts (an ACP client's MCP servers'),
 * which of them the model is offered, and the context a tool call runs with.
 */
import { realpathSync } from 'node:fs'
import { join } from 'node:path'
import type { ToolCall } from '../../generated/schemas.gen.ts'
import { toolSpecs, type ToolName } from '../../generated/tools/tools.gen.ts'
import type { LspProvider } from '../lsp/provider.ts'
import type { ToolSchema } from '../providers/types.ts'
import type { SandboxMode, Tool, ToolContext } from '../tools/types.ts'
import type { TurnToken } from './cancel.ts'
import type { EventWriter } from './event-writer.ts'
import type { FileTracker } from './file-tracker.ts'
import type { SessionDeps } from './session-types.ts'
import { toolAllowed } from './tool-patterns.ts'

/** What a tool call's context is made from. */
export interface ToolContextParts {
  call: ToolCall
  token: TurnToken
  writer: EventWriter
  cwd: string
  sandbox: SandboxMode
  deps: SessionDeps
  files: FileTracker
  lsp: LspProvider | undefined
}

export class SessionTools {
  readonly #builtins: ReadonlyMap<string, Tool>
  /** Tools a transport substitutes for this session (an ACP client's file system or terminal). */
  #overrides: ReadonlyMap<string, Tool> | undefined
  /** Tools beyond the built-ins (an ACP client's MCP servers'), each with its own contract. */
  #extras: ReadonlyMap<string, Tool> | undefined

  constructor(builtins: ReadonlyMap<string, Tool>) {
    this.#builtins = builtins
  }

  /** Every tool of the session, by name (substitutes and extras over the built-ins). */
  get all(): ReadonlyMap<string, Tool> {
    if (!this.#overrides && !this.#extras) return this.#builtins
    return new Map([...this.#builtins, ...(this.#overrides ?? []), ...(this.#extras ?? [])])
  }

  /** Substitute implementations of built-ins (`undefined` or empty restores them). */
  override(overrides: ReadonlyMap<string, Tool> | undefined): void {
    this.#overrides = overrides && overrides.size ? overrides : undefined
  }

  /** True while substitutes are in place. */
  get overridden(): boolean {
    return this.#overrides !== undefined
  }

  /** Restore the built-ins if `overrides` are the substitutes in place (another client's stay). */
  restore(overrides: ReadonlyMap<string, Tool>): void {
    if (this.#overrides === overrides) this.#overrides = undefined
  }

  /** Replace the extra tools (a built-in's name or a tool without a contract is ignored). */
  extra(tools: ReadonlyMap<string, Tool> | undefined): void {
    const kept = [...(tools ?? [])].filter(
      ([name, t]) => t.contract && !Object.hasOwn(toolSpecs, name) && !this.#builtins.has(name),
    )
    this.#extras = kept.length ? new Map(kept) : undefined
  }

  /** The tools offered to the model: the allow-list applies, and plan mode offers only those allowed without asking. */
  available(allowed: Parameters<typeof toolAllowed>[1], mode: string): ToolSchema[] {
    const out: ToolSchema[] = []
    for (const [name, tool] of this.all) {
      if (!toolAllowed(name, allowed)) continue
      const s = Object.hasOwn(toolSpecs, name) ? toolSpecs[name as ToolName] : tool.contract
      if (!s || (mode === 'plan' && s.permission !== 'allow')) continue
      out.push({ name, description: s.description, input_schema: s.inputSchema as Record<string, unknown> })
    }
    return out
  }

  /** The context a tool call runs with: its sandbox, paths, callbacks that write events, file tracking. */
  context(p: ToolContextParts): ToolContext {
    const { call, writer: w, deps } = p
    return {
      cwd: p.cwd,
      sandbox: p.sandbox,
      signal: p.token.signal,
      progress: (chunk) =>
        void w.stream('tool_progress', call.call_id, { call_id: call.call_id, tool: call.tool, ...chunk }),
      sandboxViolation: (v) => w.post('sandbox_violation', v),
      notice: (level, text) => w.post('notice', { level, text }),
      plan: (entries) => w.post('plan', { call_id: call.call_id, entries }),
      fileOpen: (path, line) => w.post('file_open', { path, ...(line !== undefined ? { line } : {}) }),
      protectedPaths: deps.protectedPaths,
      // Resolved when a tool asks (a write, Bash): a read never needs it.
      get readOnlyPaths() {
        return [join(realCwd(p.cwd), '.chimera')]
      },
      allowUnconfined: deps.allowUnconfined,
      toolEnv: deps.toolEnv,
      files: p.files,
      ...(p.lsp ? { lsp: p.lsp } : {}),
    }
  }
}

function realCwd(cwd: string): string {
  try {
    return realpathSync(cwd)
  } catch {
    return cwd
  }
}
