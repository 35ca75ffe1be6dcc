/**
 * The built-in tool registry: the eight tools by name (update_plan included), argument validation against the
 * generated `toolSpecs`, allow-lists, and the `GET /tools` descriptors. `runTool` never
 * throws: unknown tools, disallowed tools, bad arguments and unexpected exceptions all come
 * back as failed outcomes.
 */
import { toolSpecs, type ToolName } from '../../generated/tools/tools.gen.ts'
import { bashTool } from './bash.ts'
import { editTool } from './edit.ts'
import { globTool } from './glob.ts'
import { grepTool } from './grep.ts'
import { listFilesTool } from './list-files.ts'
import { formatIssues } from '../../client/wire/issues.ts'
import { errorText, fail } from './outcome.ts'
import { readTool } from './read.ts'
import { openFileTool } from './open-file.ts'
import { updatePlanTool } from './update-plan.ts'
import type { Tool, ToolContext, ToolOutcome } from './types.ts'
import { writeTool } from './write.ts'

/** The names of the built-in tools, in spec order. */
export const TOOL_NAMES = Object.keys(toolSpecs) as ToolName[]

/** True when `name` is a built-in tool name. */
export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(toolSpecs, name)
}

/** A fresh map of the built-in tools by name. */
export function builtinTools(): Map<string, Tool> {
  const tools: Tool[] = [
    readTool,
    writeTool,
    editTool,
    bashTool,
    grepTool,
    globTool,
    listFilesTool,
    updatePlanTool,
    openFileTool,
  ]
  return new Map(tools.map((t) => [t.name, t]))
}

const BUILTINS = builtinTools()

/** Options of {@link runTool}. */
export interface RunToolOptions {
  /** Only these tools may run (all when absent). */
  allowed?: readonly string[]
  /** Where to look tools up (default the built-ins). */
  tools?: ReadonlyMap<string, Tool>
}

/**
 * Validate `rawArgs` for tool `name` and run it. Every failure — unknown or disallowed tool,
 * invalid arguments, an exception inside the tool — is an `{ ok: false }` outcome.
 */
export async function runTool(
  name: string,
  rawArgs: unknown,
  ctx: ToolContext,
  opts: RunToolOptions = {},
): Promise<ToolOutcome> {
  const tools = opts.tools ?? BUILTINS
  const tool = tools.get(name)
  if (!tool || !isToolName(name)) return fail(`unknown tool "${name}"`)
  if (opts.allowed && !opts.allowed.includes(name)) {
    return fail(`tool "${name}" is not allowed in this session (allowed: ${opts.allowed.join(', ') || 'none'})`)
  }
  const parsed = toolSpecs[name].params.safeParse(rawArgs ?? {})
  if (!parsed.success) return fail(`invalid arguments for ${name}: ${formatIssues(parsed.error.issues)}`)
  try {
    const outcome = await tool.run(parsed.data, ctx)
    if (!outcome || typeof outcome !== 'object' || typeof outcome.ok !== 'boolean')
      return fail(`${name} failed: it returned no result`)
    return outcome
  } catch (e) {
    return fail(`${name} failed: ${errorText(e)}`)
  }
}

/** One entry of `GET /tools`. */
export interface ToolDescriptor {
  name: ToolName
  description: string
  input_schema: Record<string, unknown>
}

/** The descriptors of the built-in tools (only the `allowed` ones when given), in spec order. */
export function toolDescriptors(allowed?: readonly string[]): ToolDescriptor[] {
  return TOOL_NAMES.filter((n) => !allowed || allowed.includes(n)).map((name) => ({
    name,
    description: toolSpecs[name].description,
    input_schema: toolSpecs[name].inputSchema as Record<string, unknown>,
  }))
}

/**
 * Validate a list of tool names (an array, or a comma/space separated string such as a CLI
 * flag value). Unknown names throw an Error that lists the valid ones; duplicates are dropped.
 */
export function parseAllowedTools(list: string | readonly string[]): ToolName[] {
  const names = (typeof list === 'string' ? list.split(/[\s,]+/) : list).map((n) => n.trim()).filter((n) => n !== '')
  const unknown = names.filter((n) => !isToolName(n))
  if (unknown.length) {
    throw new Error(
      `unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; valid tools: ${TOOL_NAMES.join(', ')}`,
    )
  }
  return [...new Set(names as ToolName[])]
}
