/**
 * The session flags every agent command shares (`--cwd`, `--model`, `--allowed-tools`,
 * `--permission`), checked up front so a mistake is a usage error (exit 2) with a clear
 * message instead of a failure after start-up.
 */
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import { checkToolNames } from '../core/manager.ts'
import { ModelRegistry } from '../core/models.ts'
import { parsePermissionFlags, resolveRules, type Rule } from '../core/permissions.ts'
import { UsageError, parseList, repeatable } from './args.ts'

export interface SessionFlags {
  cwd: string
  model?: string
  allowedTools?: string[]
  permissionOverrides: Record<string, Rule>
}

export function sessionFlags(args: { cwd?: string; model?: string; 'allowed-tools'?: string }, rawArgs: readonly string[]): SessionFlags {
  const cwd = resolve(args.cwd ?? process.cwd())
  if (!statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--cwd: ${cwd} is not a directory`)
  const allowedTools = parseList(args['allowed-tools'])
  try {
    if (args.model !== undefined) new ModelRegistry().check(args.model)
    if (allowedTools) checkToolNames(allowedTools)
    const permissionOverrides = parsePermissionFlags(repeatable(rawArgs, '--permission'))
    resolveRules({ cwd, overrides: permissionOverrides }) // a broken .chimera/config.json fails here, clearly
    return { cwd, model: args.model, allowedTools, permissionOverrides }
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}
