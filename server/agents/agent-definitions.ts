/**
 * Agent definitions (docs/lsp.md "LSP tools": an agent opts in to or out of tools in its
 * frontmatter): `<name>.md` in the project scope (`<cwd>/.opencode/agent/`) or the user scope
 * (`~/.opencode/agent/`, or `CHIMERA_USER_AGENTS_DIR`); the project wins. Built like the custom
 * slash commands (server/commands/custom-commands.ts): the same frontmatter parsing, the same
 * name rule and size bound.
 *
 * Frontmatter: `description` (string), `tools` (a YAML list of tool names, matched
 * case-insensitively against the tool registry: `bash` is `Bash`; an unknown name is an error
 * naming it; absent: the agent does not narrow the tools), `model` (string). Other keys are
 * ignored. The markdown body is kept as `prompt`; the core has no system prompt to add it to
 * yet, so it is not sent to the model (docs/core.md "Agent definitions").
 *
 * Unlike a command, an agent is asked for by name (`--agent`), so a malformed file is an error,
 * never skipped in favour of the other scope. Files are read through definition-file.ts (inside
 * the project or the user's home, no symlink out, never under CHIMERA_HOME).
 */
import { homedir } from 'node:os'
import { join } from 'node:path'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import { isCommandName, MAX_FILE_BYTES } from '../commands/custom-commands.ts'
import { projectScope, readDefinitionFile, userScope } from '../commands/definition-file.ts'
import { splitFrontmatter } from '../commands/frontmatter.ts'

export interface AgentDefinition {
  name: string
  /** The file it came from. */
  source: string
  description: string
  /** Registry tool names, in the file's order without repeats; undefined: every tool. */
  tools?: string[]
  model?: string
  /** The markdown body (trimmed); not sent to the model yet (see the file header). */
  prompt: string
}

/** A missing or malformed agent definition (the CLI makes it a usage error). */
export class AgentDefinitionError extends Error {
  override name = 'AgentDefinitionError'
}

/** The user scope: `CHIMERA_USER_AGENTS_DIR`, else `~/.opencode/agent`. */
export function userAgentsDir(env: NodeJS.ProcessEnv = process.env): string {
  const v = env.CHIMERA_USER_AGENTS_DIR
  return v !== undefined && v !== '' ? v : join(homedir(), '.opencode', 'agent')
}

export const projectAgentsDir = (cwd: string): string => join(cwd, '.opencode', 'agent')

const REGISTRY = new Map(Object.keys(toolSpecs).map((n) => [n.toLowerCase(), n]))

/** A tool name as the registry spells it (case-insensitive match), or undefined. */
export function registryToolName(name: string): string | undefined {
  return REGISTRY.get(name.toLowerCase())
}

/** The parsed agent file, or why it is malformed. */
export function parseAgentFile(name: string, source: string, text: string): AgentDefinition | string {
  const split = splitFrontmatter(text)
  if (typeof split === 'string') return split
  const { front, body } = split
  const prompt = body.replace(/^\r?\n/, '').trimEnd()
  let description = ''
  if (front.description !== undefined && front.description !== null) {
    if (typeof front.description !== 'string') return '`description` must be a string'
    description = front.description
  }
  let tools: string[] | undefined
  if (front.tools !== undefined && front.tools !== null) {
    if (!Array.isArray(front.tools)) return '`tools` must be a list of tool names, e.g. [bash, read, lsp_diagnostics]'
    tools = []
    for (const t of front.tools) {
      if (typeof t !== 'string' || t.trim() === '') return '`tools` entries must be tool names'
      const known = registryToolName(t.trim())
      if (!known)
        return `unknown tool ${JSON.stringify(t.trim().slice(0, 80))} in \`tools\`; tools: ${Object.keys(toolSpecs).join(', ')}`
      if (!tools.includes(known)) tools.push(known)
    }
  }
  let model: string | undefined
  if (front.model !== undefined && front.model !== null) {
    if (typeof front.model !== 'string' || front.model.trim() === '') return '`model` must be a model id'
    model = front.model.trim()
  }
  return { name, source, description, ...(tools ? { tools } : {}), ...(model !== undefined ? { model } : {}), prompt }
}

/**
 * The agent named `name`: the project's file, else the user's. Throws AgentDefinitionError when
 * the name is not a valid agent name, no scope has it, or the file that has it is malformed.
 */
export function loadAgentDefinition(
  name: string,
  o: { cwd: string; userDir?: string; env?: NodeJS.ProcessEnv },
): AgentDefinition {
  if (!isCommandName(name))
    throw new AgentDefinitionError(
      `${JSON.stringify(String(name).slice(0, 80))} is not an agent name (a letter, then letters, digits, _, . and -; at most 64)`,
    )
  const env = o.env ?? process.env
  const userDir = o.userDir ?? userAgentsDir(o.env)
  const dirs = [projectAgentsDir(o.cwd), userDir]
  const scopes = [projectScope(o.cwd, env), userScope(userDir, env)]
  for (const [i, dir] of dirs.entries()) {
    const source = join(dir, `${name}.md`)
    const read = readDefinitionFile(source, scopes[i]!, MAX_FILE_BYTES)
    if (!read.ok) {
      if (read.kind === 'missing' || read.kind === 'directory') continue
      if (read.kind === 'too_large') throw new AgentDefinitionError(`${source}: larger than ${MAX_FILE_BYTES} bytes`)
      throw new AgentDefinitionError(read.kind === 'refused' ? `not read: ${read.reason}` : `${source}: ${read.reason}`)
    }
    const r = parseAgentFile(name, source, read.text)
    if (typeof r === 'string') throw new AgentDefinitionError(`${source}: ${r}`)
    return r
  }
  throw new AgentDefinitionError(`no agent named "${name}" (looked for ${name}.md in ${dirs.join(' and ')})`)
}

/** The tools a session may use: the agent's list, cut to `allowed` (`--allowed-tools`) when both are given. */
export function agentAllowedTools(
  agentTools: readonly string[] | undefined,
  allowed: readonly string[] | undefined,
): string[] | undefined {
  if (!agentTools) return allowed ? [...allowed] : undefined
  if (!allowed) return [...agentTools]
  return agentTools.filter((t) => allowed.includes(t))
}
