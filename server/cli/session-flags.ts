/**
 * The session flags every agent command shares, declared once and checked up front, so a
 * mistake is a usage error (exit 2, one line on stderr, nothing on stdout) before anything
 * starts: `--cwd` (an existing directory), `--model` (served by a configured provider),
 * `--allowed-tools` (known tools), `--permission Tool=rule` (repeatable), `--sandbox`,
 * `--approval` (`allow`, `deny`, `ask`, and the ferret presets `auto`, `read-only`) and
 * `--allow-unconfined` (run Bash without bubblewrap in the confined modes).
 */
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ManagerOptions } from '../core/manager.ts'
import { checkToolNames } from '../core/manager.ts'
import type { ModelRegistry } from '../core/model-registry.ts'
import { APPROVAL_POLICIES, parsePermissionFlags, resolveRules, type ApprovalPolicy } from '../core/permissions.ts'
import { loadProjectConfig } from '../core/project-config.ts'
import type { SandboxMode } from '../tools/types.ts'
import type { ArgsDef } from 'citty'
import { UsageError, parseList, repeatable } from './args.ts'

export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const

/** citty argument definitions of the session flags (`approval` default differs per agent). */
export function sessionArgs(defaultApproval: ApprovalPolicy) {
  return {
    cwd: { type: 'string' as const, description: 'Working directory of new sessions (default: the current directory)' },
    model: { type: 'string', description: 'Model id, or provider/model (default: offline)' },
    'allowed-tools': { type: 'string', description: 'Comma-separated tool allow-list' },
    permission: { type: 'string', description: 'Permission rule override Tool=allow|ask|deny (repeatable)' },
    sandbox: { type: 'enum', options: [...SANDBOX_MODES] as string[], description: 'File and shell confinement', default: 'workspace-write' },
    approval: { type: 'enum', options: [...APPROVAL_POLICIES] as string[], description: 'How tools that ask for permission are answered (auto, read-only: presets, see docs/core.md)', default: defaultApproval as string },
    'allow-unconfined': { type: 'boolean', description: 'Run Bash without bubblewrap when it is missing (the confined sandbox modes refuse otherwise)', default: false },
  } satisfies ArgsDef
}

export type SessionFlagValues = {
  cwd?: string
  model?: string
  'allowed-tools'?: string
  sandbox?: string
  approval?: string
  'allow-unconfined'?: boolean
}

export type SessionDefaults = Pick<ManagerOptions, 'cwd' | 'model' | 'allowedTools' | 'permissionOverrides' | 'sandbox' | 'approval' | 'allowUnconfined'>

/** Check the session flags and turn them into session-manager defaults; UsageError when wrong. */
export function sessionFlags(args: SessionFlagValues, rawArgs: readonly string[], models: ModelRegistry): SessionDefaults {
  const cwd = resolve(args.cwd ?? process.cwd())
  if (!statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--cwd: ${cwd} is not a directory`)
  const allowedTools = parseList(args['allowed-tools'])
  try {
    if (args.model !== undefined) models.check(args.model)
    if (allowedTools) checkToolNames(allowedTools)
    const permissionOverrides = parsePermissionFlags(repeatable(rawArgs, '--permission'))
    // A broken .chimera/config.json fails here, clearly.
    resolveRules({ cwd, overrides: permissionOverrides, config: loadProjectConfig(cwd) })
    return {
      cwd,
      ...(args.model !== undefined ? { model: args.model } : {}),
      ...(allowedTools ? { allowedTools } : {}),
      permissionOverrides,
      sandbox: (args.sandbox ?? 'workspace-write') as SandboxMode,
      approval: (args.approval ?? 'allow') as ApprovalPolicy,
      allowUnconfined: args['allow-unconfined'] ?? false,
    }
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}
