/**
 * The session flags every agent command shares, declared once and checked up front, so a
 * mistake is a usage error (exit 2, one line on stderr, nothing on stdout) before anything
 * starts: `--cwd` (an existing directory), `--model` (served by a configured provider),
 * `--allowed-tools` (known tools), `--permission Tool=rule` (repeatable), `--sandbox`,
 * `--approval` (`allow`, `deny`, `ask`, and the ferret presets `auto`, `read-only`) and
 * `--allow-unconfined` (run Bash without bubblewrap in the confined modes), and `--agent` (an
 * agent definition whose frontmatter sets the tools, cut to `--allowed-tools` when both are
 * given, and the model unless `--model` is given; server/agents/agent-definitions.ts).
 */
import {
  AgentDefinitionError,
  agentAllowedTools,
  loadAgentDefinition,
  type AgentDefinition,
} from '../agents/agent-definitions.ts'
import { loadFrontmatterParser } from '../commands/frontmatter.ts'
import type { ManagerOptions } from '../core/manager.ts'
import { checkToolNames } from '../core/manager.ts'
import type { ModelRegistry } from '../core/model-registry.ts'
import { parsePermissionFlags, resolveRules, type ApprovalPolicy } from '../core/permissions.ts'
import { loadProjectConfig } from '../core/project-config.ts'
import type { SandboxMode } from '../tools/types.ts'
import { UsageError, parseList, repeatable } from './args.ts'
import { sessionCwd, type SessionFlagValues } from './session-args.ts'

export { SANDBOX_MODES, sessionArgs, sessionCwd, type SessionFlagValues } from './session-args.ts'

export type SessionDefaults = Pick<
  ManagerOptions,
  'cwd' | 'model' | 'allowedTools' | 'permissionOverrides' | 'sandbox' | 'approval' | 'allowUnconfined'
>

/**
 * `--agent <name>`: its definition (project scope of `--cwd`, then the user scope), undefined
 * without the flag, a usage error naming the file and what is wrong. Read before the model
 * registry is built: the agent's `model` chooses the process's provider when `--model` is absent.
 * `env` and `userDir` locate the user scope (tests point it elsewhere).
 */
export function agentFlag(
  args: SessionFlagValues,
  o: { env?: NodeJS.ProcessEnv; userDir?: string } = {},
): AgentDefinition | undefined {
  if (args.agent === undefined) return undefined
  const cwd = sessionCwd(args)
  try {
    return loadAgentDefinition(args.agent, { cwd, ...o })
  } catch (err) {
    if (err instanceof AgentDefinitionError) throw new UsageError(`--agent: ${err.message}`)
    throw err
  }
}

/** `agentFlag` once the YAML parser an agent file's frontmatter needs is loaded (the commands' way in). */
export async function readAgentFlag(
  args: SessionFlagValues,
  o: { env?: NodeJS.ProcessEnv; userDir?: string } = {},
): Promise<AgentDefinition | undefined> {
  if (args.agent !== undefined) await loadFrontmatterParser()
  return agentFlag(args, o)
}

/** The model the process runs by default: `--model`, else the agent's. */
export const sessionModel = (args: SessionFlagValues, agent: AgentDefinition | undefined): string | undefined =>
  args.model ?? agent?.model

/**
 * Check the session flags and turn them into session-manager defaults; UsageError when wrong.
 * `agent` (from `agentFlag`) narrows the tools (cut to `--allowed-tools` when both are given)
 * and gives the model when `--model` is absent.
 */
export function sessionFlags(
  args: SessionFlagValues,
  rawArgs: readonly string[],
  models: ModelRegistry,
  agent?: AgentDefinition,
): SessionDefaults {
  const cwd = sessionCwd(args)
  const listed = parseList(args['allowed-tools'])
  const model = sessionModel(args, agent)
  if (args.model === undefined && agent?.model !== undefined) {
    try {
      models.check(agent.model)
    } catch (err) {
      throw new UsageError(`--agent: ${agent.source}: \`model\`: ${(err as Error).message}`)
    }
  }
  try {
    if (model !== undefined) models.check(model)
    if (listed) checkToolNames(listed)
    const allowedTools = agentAllowedTools(agent?.tools, listed)
    const permissionOverrides = parsePermissionFlags(repeatable(rawArgs, '--permission'))
    // A broken .chimera/config.json fails here, clearly.
    resolveRules({ cwd, overrides: permissionOverrides, config: loadProjectConfig(cwd) })
    return {
      cwd,
      ...(model !== undefined ? { model } : {}),
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
