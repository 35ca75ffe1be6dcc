/**
 * Permissions. Every tool has a rule — `allow`, `ask` or `deny` — taken, in rising priority,
 * from the tool's default in specs/tools/tools.yaml (read-only tools allow; tools that change
 * files or run commands ask), the project config (`<cwd>/.chimera/config.json`,
 * `{"permission": {"Bash": "allow"}}`) and the command line (`--permission Bash=deny`).
 *
 * An `ask` is first looked up in the permission audit log: an earlier `always` or `never` for
 * the same working directory, tool and normalised arguments decides it, across restarts.
 * Otherwise the session's approval policy decides (docs/core.md, "Approval presets"):
 *
 * | policy    | file changes (Write, Edit, …) | Bash                                          |
 * |-----------|-------------------------------|-----------------------------------------------|
 * | allow     | run                           | run                                           |
 * | deny      | tool error                    | tool error                                    |
 * | ask       | pending request               | pending request                               |
 * | auto      | run                           | read-only commands run; others: pending request |
 * | read-only | tool error                    | read-only commands run; others: tool error    |
 *
 * Tools that are not built-ins (an ACP client's MCP servers') have the rule `ask` unless a rule
 * names them (`mcp__<server>__<tool>`, `mcp__<server>`, `mcp__*`: core/tool-patterns.ts) and are medium risk: `auto` asks for them, `read-only` refuses them.
 *
 * Under `read-only` every tool call also runs in the `read-only` sandbox. A pending request
 * may be answered from any transport with `allow` (once), `always`, `deny` (once) or `never`;
 * `always` / `never` are appended to the audit log. A cancelled turn releases its requests.
 */
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import type { PermissionDecision } from '../../generated/schemas.gen.ts'
import type { AuditRecord, AuditStore } from '../store/audit-store.ts'
import { classifyCommand } from './bash-risk.ts'
import { configPath, loadProjectConfig, type ProjectConfig } from './project-config.ts'
import { APPROVAL_POLICIES, type ApprovalPolicy } from './approval-policies.ts'
import { isToolPattern } from './tool-patterns.ts'

export type Rule = 'allow' | 'ask' | 'deny'
// Defined apart so the CLI's flag definitions load without the tool table (docs/decisions/0140).
export { APPROVAL_POLICIES, type ApprovalPolicy }
export type { PermissionDecision }

export const RULES: readonly Rule[] = ['allow', 'ask', 'deny']

/** True when `name` is a tool of the contract (own property: `toString` is not a tool). */
export const isKnownTool = (name: string): boolean => Object.hasOwn(toolSpecs, name)

export const isApprovalPolicy = (v: unknown): v is ApprovalPolicy =>
  typeof v === 'string' && (APPROVAL_POLICIES as readonly string[]).includes(v)

const toolList = (): string =>
  `${Object.keys(toolSpecs).join(', ')}, or MCP tools (mcp__<server>__<tool>, mcp__<server>, mcp__*)`

/** The rule for every tool: defaults, then project config, then command-line overrides. */
export function resolveRules(opts: {
  cwd: string
  overrides?: ReadonlyMap<string, Rule>
  config?: ProjectConfig
}): Map<string, Rule> {
  const rules = new Map<string, Rule>(Object.entries(toolSpecs).map(([name, s]) => [name, s.permission as Rule]))
  const cfg = configPath(opts.cwd)
  {
    const perm = (opts.config ?? loadProjectConfig(opts.cwd)).permission
    if (perm !== undefined) {
      if (typeof perm !== 'object' || perm === null || Array.isArray(perm))
        throw new Error(`${cfg}: "permission" must be an object of tool → allow|ask|deny`)
      for (const [tool, rule] of Object.entries(perm)) {
        if (!isKnownTool(tool) && !isToolPattern(tool))
          throw new Error(`${cfg}: unknown tool "${tool}" in "permission"; tools: ${toolList()}`)
        if (!RULES.includes(rule as Rule))
          throw new Error(`${cfg}: permission for ${tool} must be allow, ask or deny, got ${JSON.stringify(rule)}`)
        rules.set(tool, rule as Rule)
      }
    }
  }
  for (const [tool, rule] of opts.overrides ?? []) rules.set(tool, rule)
  return rules
}

/** `Bash=allow,Write=deny` → overrides; throws on a malformed entry or an unknown tool. */
export function parsePermissionFlags(values: readonly string[]): Map<string, Rule> {
  const out = new Map<string, Rule>()
  for (const entry of values
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean)) {
    const parts = entry.split('=')
    const [tool, rule] = parts
    if (parts.length !== 2 || !tool || !RULES.includes(rule as Rule))
      throw new Error(`--permission expects Tool=allow|ask|deny, got ${JSON.stringify(entry)}`)
    if (!isKnownTool(tool) && !isToolPattern(tool))
      throw new Error(`--permission: unknown tool "${tool}"; tools: ${toolList()}`)
    out.set(tool, rule as Rule)
  }
  return out
}

/**
 * The `always` / `never` decisions, scoped by working directory, tool and normalised
 * arguments, kept in an `AuditStore` (CHIMERA_HOME/permissions/audit.jsonl by default).
 * Loaded once, lazily; later records win.
 */
export class PermissionAuditLog {
  readonly #store: AuditStore
  readonly #latest = new Map<string, 'always' | 'never'>()
  #loading: Promise<void> | undefined

  constructor(store: AuditStore) {
    this.#store = store
  }

  static #key(cwd: string, tool: string, key: string): string {
    return JSON.stringify([cwd, tool, key])
  }

  /** Load the stored decisions (once; later calls wait for the same load). */
  ready(): Promise<void> {
    this.#loading ??= this.#store.load().then((records) => {
      for (const r of records) this.#latest.set(PermissionAuditLog.#key(r.cwd, r.tool, r.key), r.decision)
    })
    return this.#loading
  }

  async lookup(cwd: string, tool: string, key: string): Promise<'always' | 'never' | undefined> {
    await this.ready()
    return this.#latest.get(PermissionAuditLog.#key(cwd, tool, key))
  }

  async record(r: Omit<AuditRecord, 'ts'>): Promise<void> {
    await this.ready()
    await this.#store.append({ ts: new Date().toISOString(), ...r })
    this.#latest.set(PermissionAuditLog.#key(r.cwd, r.tool, r.key), r.decision)
  }
}

/** How risky a call looks, for `permission_request.risk` and the `auto` preset. */
export type Risk = 'low' | 'medium' | 'high'

const CHANGES_FILES: ReadonlySet<string> = new Set(['Write', 'Edit', 'lsp_rename'])

export function riskOf(tool: string, args: Record<string, unknown>): Risk {
  // A tool from outside (an MCP server's) may do anything its server does.
  if (!isKnownTool(tool)) return 'medium'
  if (tool === 'Bash') return classifyCommand(typeof args.command === 'string' ? args.command : '')
  return CHANGES_FILES.has(tool) ? 'medium' : 'low'
}

/** What the approval policy does with a call whose rule is `ask` and that the log does not decide. */
export function approvalVerdict(policy: ApprovalPolicy, tool: string, risk: Risk): 'run' | 'refuse' | 'ask' {
  switch (policy) {
    case 'allow':
      return 'run'
    case 'deny':
      return 'refuse'
    case 'ask':
      return 'ask'
    case 'auto':
      // Built-in file changes run; Bash runs when read-only; tools from outside (MCP) ask.
      if (!isKnownTool(tool)) return 'ask'
      return tool !== 'Bash' || risk === 'low' ? 'run' : 'ask'
    case 'read-only':
      return tool === 'Bash' && risk === 'low' ? 'run' : 'refuse'
  }
}

export type GateOutcome = { run: true; via: string } | { run: false; reason: string }

/** Turn a reply into an outcome (and record always/never). */
export async function applyReply(
  decision: PermissionDecision | 'cancelled',
  audit: PermissionAuditLog,
  rec: Omit<AuditRecord, 'ts' | 'decision'>,
): Promise<GateOutcome> {
  if (decision === 'always' || decision === 'never') await audit.record({ ...rec, decision })
  if (decision === 'allow' || decision === 'always') return { run: true, via: decision }
  if (decision === 'cancelled') return { run: false, reason: 'the permission request was cancelled' }
  return { run: false, reason: `permission ${decision === 'never' ? 'denied (never)' : 'denied'} for ${rec.tool}` }
}
