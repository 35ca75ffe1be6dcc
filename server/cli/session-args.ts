/**
 * The session flags' definitions and the checks that need no agent module (the flag list, the
 * `--cwd` check), apart from session-flags.ts so `chimera ferret serve` can parse its command
 * line without loading the core (docs/decisions/0140).
 */
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ArgsDef } from 'citty'
import { APPROVAL_POLICIES, type ApprovalPolicy } from '../core/approval-policies.ts'
import { UsageError } from './args.ts'

export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const

/**
 * citty argument definitions of the session flags. The `--approval` default depends on who is on
 * the other end: `ask` where a person answers (ACP, HTTP), `allow` where the parent process is
 * the user (JSON-lines RPC); `why` says so in `--help`.
 */
export function sessionArgs(defaultApproval: ApprovalPolicy, why: string) {
  return {
    cwd: { type: 'string' as const, description: 'Working directory of new sessions (default: the current directory)' },
    model: { type: 'string', description: 'Model id, or provider/model (default: offline)' },
    'allowed-tools': { type: 'string', description: 'Comma-separated tool allow-list' },
    permission: { type: 'string', description: 'Permission rule override Tool=allow|ask|deny (repeatable)' },
    sandbox: {
      type: 'enum',
      options: [...SANDBOX_MODES] as string[],
      description: 'File and shell confinement',
      default: 'workspace-write',
    },
    approval: {
      type: 'enum',
      options: [...APPROVAL_POLICIES] as string[],
      description: `How tools that ask for permission are answered (auto, read-only: presets, see docs/core.md). Default ${defaultApproval}: ${why}`,
      default: defaultApproval as string,
    },
    'allow-unconfined': {
      type: 'boolean',
      description: 'Run Bash without bubblewrap when it is missing (the confined sandbox modes refuse otherwise)',
      default: false,
    },
    agent: {
      type: 'string',
      description: 'Agent definition (.opencode/agent/<name>.md, project then ~/.opencode/agent): its tools and model',
    },
  } satisfies ArgsDef
}

export type SessionFlagValues = {
  cwd?: string
  model?: string
  'allowed-tools'?: string
  sandbox?: string
  approval?: string
  'allow-unconfined'?: boolean
  agent?: string
}

/** `--cwd` resolved (default: the current directory); UsageError when it is not a directory. */
export function sessionCwd(args: SessionFlagValues): string {
  const cwd = resolve(args.cwd ?? process.cwd())
  if (!statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--cwd: ${cwd} is not a directory`)
  return cwd
}
