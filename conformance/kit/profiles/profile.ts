/**
 * Target profiles (docs/decisions/0101): a small JSON or YAML file saying how to start an
 * implementation on each transport, how to point it at the model double (environment
 * variables, arguments or a config file it reads), how its tool names map to the scenarios'
 * abstract actions, how to start it with a named configuration (`approval=ask`), and which
 * optional capabilities it claims. Strings may use `${double.url}`, `${double.origin}`, `${double.model}`,
 * `${double.key}`, `${home}`, `${workspace}`, `${port}`, `${token}`, `${kit}`, `${node}`; tool
 * argument templates `${path}`, `${abspath}`, `${content}`, `${addlines}`, `${command}`.
 */
import { dirname, isAbsolute, resolve } from 'node:path'
import { loadDataFile } from '../data-file.ts'
import * as z from 'zod'
import { TRANSPORTS, type TransportId } from '../corpus/ids.ts'
import { ACTIONS, type Action, type PromptLine } from '../corpus/scenario.ts'

const FileContent = z.union([z.string(), z.record(z.string(), z.unknown())])
const Setup = {
  env: z.record(z.string(), z.string()).default({}),
  /** Files written before start: a path relative to the workspace, or under `${home}`; objects are written as JSON and merged with other objects for the same path. */
  files: z.record(z.string(), FileContent).default({}),
}
const Launch = z
  .object({
    /** Program and arguments (no shell). Absent for an HTTP server the user started. */
    command: z.array(z.string()).min(1).optional(),
    ...Setup,
    /** HTTP: the base URL (`http://127.0.0.1:${port}`), its master token, and a path polled until it answers. */
    url: z.string().optional(),
    token: z.string().optional(),
    ready: z.string().default('/health'),
  })
  .strict()
export type Launch = z.infer<typeof Launch>

const Tool = z.object({ name: z.string().min(1), args: z.record(z.string(), z.string()) }).strict()

export const ProfileSchema = z
  .object({
    profile: z.literal(1),
    name: z.string().min(1),
    description: z.string().optional(),
    /** Start the model double for this target (an OpenAI-compatible server on loopback). */
    model: z
      .object({ double: z.boolean().default(true), apiKey: z.string().optional() })
      .strict()
      .optional(),
    targets: z.partialRecord(z.enum(TRANSPORTS), Launch),
    /** Abstract action → tool name and argument template (`${path}`, `${abspath}`, `${content}`, `${addlines}`, `${command}`). */
    tools: z.partialRecord(z.enum(ACTIONS), Tool).default({}),
    /** ACP v1 `tool_call.kind` values that count as each action. */
    acpKinds: z.partialRecord(z.enum(ACTIONS), z.array(z.string())).default({}),
    /** Named configurations (`approval=ask`) → extra arguments, environment and files. */
    config: z.record(z.string(), z.object({ args: z.array(z.string()).default([]), ...Setup }).strict()).default({}),
    /** ACP v1: session config options set with `session/set_config_option` after each `session/new` (e.g. `{"model": "double/chimera-double"}`). */
    acpSessionConfig: z.record(z.string(), z.string()).default({}),
    capabilities: z.array(z.string()).default([]),
    /** An expected-failures file, relative to the profile. */
    expectedFailures: z.string().optional(),
  })
  .strict()
export type Profile = z.infer<typeof ProfileSchema>

/** What the spec's own tools are called (specs/tools/tools.yaml): the default mapping. */
export const DEFAULT_TOOLS: Record<Action, z.infer<typeof Tool>> = {
  read: { name: 'Read', args: { path: '${path}' } },
  write: { name: 'Write', args: { path: '${path}', content: '${content}' } },
  run: { name: 'Bash', args: { command: '${command}' } },
}
export const DEFAULT_KINDS: Record<Action, string[]> = { read: ['read'], write: ['edit'], run: ['execute'] }

export interface ResolvedProfile {
  profile: Profile
  /** Directory of the profile file (relative paths resolve against it). */
  dir: string
  tools: Record<Action, z.infer<typeof Tool>>
  kinds: Record<Action, string[]>
  /** The action a tool name stands for. */
  actionOfTool(name: string | undefined): Action | undefined
  actionOfKind(kind: string | undefined): Action | undefined
}

export function resolveProfile(p: Profile, dir: string): ResolvedProfile {
  const tools = { ...DEFAULT_TOOLS, ...p.tools } as Record<Action, z.infer<typeof Tool>>
  const kinds = { ...DEFAULT_KINDS, ...p.acpKinds } as Record<Action, string[]>
  return {
    profile: p,
    dir,
    tools,
    kinds,
    actionOfTool: (name) => ACTIONS.find((a) => tools[a].name === name),
    actionOfKind: (kind) => ACTIONS.find((a) => kind !== undefined && kinds[a].includes(kind)),
  }
}

export function loadProfile(file: string): ResolvedProfile {
  return resolveProfile(loadDataFile(file, ProfileSchema, 'a target profile'), dirname(resolve(file)))
}

/** An empty profile: the given commands, the spec's tool names, no model double. */
export function adHocProfile(targets: Partial<Record<TransportId, Launch>>): ResolvedProfile {
  return resolveProfile(ProfileSchema.parse({ profile: 1, name: 'command line', targets }), process.cwd())
}

/** Replace `${name}` with the variable's value; unknown names are an error (a typo must not pass silently). */
export function expand(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([a-zA-Z_][\w.]*)\}/g, (_m, n: string) => {
    if (!Object.hasOwn(vars, n))
      throw new Error(`profile: unknown variable \${${n}} (known: ${Object.keys(vars).join(', ')})`)
    return vars[n]!
  })
}

export function expandDeep(v: unknown, vars: Record<string, string>): unknown {
  if (typeof v === 'string') return expand(v, vars)
  if (Array.isArray(v)) return v.map((x) => expandDeep(x, vars))
  // Keys too: a config file may be keyed by the double's model id.
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [expand(k, vars), expandDeep(x, vars)]))
  return v
}

/** JSON-escape a value for use inside a directive's JSON arguments. */
const jsonInner = (s: string): string => JSON.stringify(s).slice(1, -1)

/**
 * Content as the added lines of a patch (`+line\n` per line; nothing for empty content), for
 * agents whose write tool takes a patch (Codex's `apply_patch`: `*** Add File: …`). A final
 * newline ends the last line rather than adding an empty one.
 */
export function addLines(content: string): string {
  if (content === '') return ''
  return content
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => `+${l}\n`)
    .join('')
}

/** A prompt as the model double reads it: one directive per line, abstract calls mapped through the profile. */
export function renderPrompt(lines: string | readonly PromptLine[], rp: ResolvedProfile, workspace: string): string {
  if (typeof lines === 'string') return lines
  return lines
    .map((l) => {
      if (typeof l === 'string') return l
      if ('say' in l) return `!say ${l.say}`
      if ('think' in l) return `!think ${l.think}`
      if ('sleep' in l) return `!sleep ${l.sleep}`
      if ('fail' in l) return `!fail ${l.fail}`
      const tool = rp.tools[l.call]
      const path = l.path ?? ''
      const vars: Record<string, string> = {
        path: jsonInner(path),
        abspath: jsonInner(isAbsolute(path) ? path : resolve(workspace, path)),
        content: jsonInner(l.content ?? ''),
        addlines: jsonInner(addLines(l.content ?? '')),
        command: jsonInner(l.command ?? ''),
      }
      const args = Object.entries(tool.args).map(([k, t]) => `${JSON.stringify(k)}:"${expand(t, vars)}"`)
      return `!call ${tool.name} {${args.join(',')}}`
    })
    .join('\n')
}
