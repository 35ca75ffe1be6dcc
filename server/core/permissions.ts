/**
 * Permissions. Every tool has a rule — `allow`, `ask` or `deny` — taken, in rising priority,
 * from the tool's default in specs/tools/tools.yaml (read-only tools allow; tools that change
 * files or run commands ask), the project config (`<cwd>/.chimera/config.json`,
 * `{"permission": {"Bash": "allow"}}`) and the command line (`--permission Bash=deny`).
 *
 * An `ask` is first looked up in the permission audit log: an earlier `always` or `never` for
 * the same tool and normalised arguments decides it, across restarts. Otherwise the session's
 * approval policy decides: `allow` (the parent process is the user), `deny`, or `ask` — a
 * pending request that any transport may answer with `allow` (once), `always`, `deny` (once)
 * or `never`; `always`/`never` are appended to the audit log. A cancelled turn releases its
 * pending requests.
 *
 * | rule  | audit log | approval | outcome                               |
 * |-------|-----------|----------|---------------------------------------|
 * | allow | —         | —        | run                                   |
 * | deny  | —         | —        | tool error "denied by rule"           |
 * | ask   | always    | —        | run                                   |
 * | ask   | never     | —        | tool error "denied (never)"           |
 * | ask   | none      | allow    | run                                   |
 * | ask   | none      | deny     | tool error "needs approval"           |
 * | ask   | none      | ask      | pending request → allow/always: run; deny/never/cancel: error |
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import type { PermissionDecision } from '../../generated/schemas.gen.ts'

export type Rule = 'allow' | 'ask' | 'deny'
export type ApprovalPolicy = 'allow' | 'deny' | 'ask'
export type { PermissionDecision }

export const RULES: readonly Rule[] = ['allow', 'ask', 'deny']

/** The rule for every tool: defaults, then project config, then command-line overrides. */
export function resolveRules(opts: { cwd: string; overrides?: Record<string, Rule> }): Map<string, Rule> {
  const rules = new Map<string, Rule>(Object.entries(toolSpecs).map(([name, s]) => [name, s.permission as Rule]))
  const cfg = join(opts.cwd, '.chimera', 'config.json')
  if (existsSync(cfg)) {
    let parsed: unknown
    try {
      parsed = JSON.parse(readFileSync(cfg, 'utf8'))
    } catch (e) {
      throw new Error(`${cfg}: not valid JSON (${(e as Error).message})`)
    }
    const perm = (parsed as { permission?: unknown }).permission
    if (perm !== undefined) {
      if (typeof perm !== 'object' || perm === null || Array.isArray(perm)) throw new Error(`${cfg}: "permission" must be an object of tool → allow|ask|deny`)
      for (const [tool, rule] of Object.entries(perm)) {
        if (!(tool in toolSpecs)) throw new Error(`${cfg}: unknown tool "${tool}" in "permission"; tools: ${Object.keys(toolSpecs).join(', ')}`)
        if (!RULES.includes(rule as Rule)) throw new Error(`${cfg}: permission for ${tool} must be allow, ask or deny, got ${JSON.stringify(rule)}`)
        rules.set(tool, rule as Rule)
      }
    }
  }
  for (const [tool, rule] of Object.entries(opts.overrides ?? {})) rules.set(tool, rule)
  return rules
}

/** `Bash=allow,Write=deny` → overrides; throws on a malformed entry. */
export function parsePermissionFlags(values: string[]): Record<string, Rule> {
  const out: Record<string, Rule> = {}
  for (const entry of values.flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean)) {
    const parts = entry.split('=')
    const [tool, rule] = parts
    if (parts.length !== 2 || !tool || !RULES.includes(rule as Rule)) throw new Error(`--permission expects Tool=allow|ask|deny, got ${JSON.stringify(entry)}`)
    if (!(tool in toolSpecs)) throw new Error(`--permission: unknown tool "${tool}"; tools: ${Object.keys(toolSpecs).join(', ')}`)
    out[tool] = rule as Rule
  }
  return out
}

export interface AuditRecord {
  ts: string
  session_id: string
  tool: string
  key: string
  decision: 'always' | 'never'
}

/** Append-only JSON-lines log of `always` / `never` decisions (CHIMERA_HOME/permissions/audit.jsonl). */
export class PermissionAuditLog {
  readonly path: string
  readonly #latest = new Map<string, 'always' | 'never'>()

  constructor(path: string) {
    this.path = path
    if (!existsSync(path)) return
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (!line.trim()) continue
      try {
        const r = JSON.parse(line) as AuditRecord
        if ((r.decision === 'always' || r.decision === 'never') && typeof r.tool === 'string' && typeof r.key === 'string') {
          this.#latest.set(`${r.tool}\u0000${r.key}`, r.decision)
        }
      } catch {
        // a torn last line after a crash: ignore it
      }
    }
  }

  lookup(tool: string, key: string): 'always' | 'never' | undefined {
    return this.#latest.get(`${tool}\u0000${key}`)
  }

  record(r: Omit<AuditRecord, 'ts'>): void {
    mkdirSync(dirname(this.path), { recursive: true })
    appendFileSync(this.path, `${JSON.stringify({ ts: new Date().toISOString(), ...r })}\n`)
    this.#latest.set(`${r.tool}\u0000${r.key}`, r.decision)
  }
}

export type GateOutcome = { run: true; via: string } | { run: false; reason: string }

/** Turn a reply into an outcome (and record always/never). */
export function applyReply(decision: PermissionDecision | 'cancelled', audit: PermissionAuditLog, rec: Omit<AuditRecord, 'ts' | 'decision'>): GateOutcome {
  if (decision === 'always' || decision === 'never') audit.record({ ...rec, decision })
  if (decision === 'allow' || decision === 'always') return { run: true, via: decision }
  if (decision === 'cancelled') return { run: false, reason: 'the permission request was cancelled' }
  return { run: false, reason: `permission ${decision === 'never' ? 'denied (never)' : 'denied'} for ${rec.tool}` }
}
