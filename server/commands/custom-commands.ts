/**
 * Custom slash commands (docs/commands.md "Custom slash commands over HTTP"): `<name>.md` files in the
 * project scope (`<cwd>/.opencode/command/`) and the user scope (`~/.opencode/command/`, or
 * `CHIMERA_USER_COMMANDS_DIR`); the project wins on a name conflict. A file is an optional YAML
 * frontmatter (`description`, `args: [{name, description}]`; other keys are ignored) and the
 * template. A malformed file is skipped and reported in `problems`, never fatal.
 *
 * One `CustomCommands` per working directory: the core's `CommandRenderer` for `/name args`
 * prompts, `list()` for `GET /commands`, and `invoke()` for `POST /commands/{name}/invoke`
 * (its errors carry the document's codes and statuses). The directories are read again on each
 * call (a file added or edited while the server runs is seen at once); parsed files are cached
 * by path, size and modification time. Reads are synchronous (the core's renderer is) and
 * bounded: at most MAX_FILES per scope, MAX_FILE_BYTES per file. Every directory and file is
 * read through definition-file.ts: inside the project (or the user's home), never through a
 * symlink out, never under CHIMERA_HOME (docs/decisions/0022-verified-opens.md).
 */
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { components } from '../../generated/http/openapi.gen.d.ts'
import { ChimeraError } from '../errors.ts'
import type { CommandRenderer } from '../core/slash-commands.ts'
import {
  listDefinitionDir,
  projectScope,
  readDefinitionFile,
  userScope,
  type DefinitionScope,
} from './definition-file.ts'
import {
  frontmatterParserLoaded,
  loadFrontmatterParser,
  loadFrontmatterParserSoon,
  splitFrontmatter,
} from './frontmatter.ts'
import { argumentString, isArgName, parseArgumentString, renderTemplate, type TemplateArgs } from './template.ts'

export type CommandDescriptor = components['schemas']['CommandDescriptor']
export type CommandArg = components['schemas']['CommandArg']
export type CommandProblem = components['schemas']['CommandProblem']
export type CommandsListResponse = components['schemas']['CommandsListResponse']

export const MAX_FILES = 200
export const MAX_FILE_BYTES = 64 * 1024
/** Command names: what a slash prompt can name (`/name`), no path separators, no leading dot. */
const NAME_RE = /^[A-Za-z][\w.-]{0,63}$/
/** Handled by the core before custom commands; a file of that name could never run. */
const RESERVED = new Set(['undo', 'redo'])

export const isCommandName = (s: unknown): s is string => typeof s === 'string' && NAME_RE.test(s) && !s.endsWith('.')

/** The user scope: `CHIMERA_USER_COMMANDS_DIR`, else `~/.opencode/command`. */
export function userCommandsDir(env: NodeJS.ProcessEnv = process.env): string {
  const v = env.CHIMERA_USER_COMMANDS_DIR
  return v !== undefined && v !== '' ? v : join(homedir(), '.opencode', 'command')
}

export const projectCommandsDir = (cwd: string): string => join(cwd, '.opencode', 'command')

interface Parsed {
  key: string
  command?: { descriptor: CommandDescriptor; template: string }
  problem?: string
}

export interface CustomCommandsOptions {
  cwd: string
  /** The user scope (default `userCommandsDir(env)`). */
  userDir?: string
  env?: NodeJS.ProcessEnv
}

/** The parsed command file, or why it is skipped. */
export function parseCommandFile(
  name: string,
  source: string,
  text: string,
): { descriptor: CommandDescriptor; template: string } | string {
  const split = splitFrontmatter(text)
  if (typeof split === 'string') return split
  const { front: fm, body } = split
  // The file's own line breaks around the template are not part of the prompt.
  const template = body.replace(/^\r?\n/, '').trimEnd()
  if (template.trim() === '') return 'the template is empty'
  let description: string
  if (fm.description === undefined || fm.description === null) description = firstLine(template)
  else if (typeof fm.description === 'string') description = fm.description
  else return '`description` must be a string'
  const args: CommandArg[] = []
  if (fm.args !== undefined && fm.args !== null) {
    if (!Array.isArray(fm.args)) return '`args` must be a list'
    for (const a of fm.args) {
      const arg =
        typeof a === 'string'
          ? { name: a, description: '' }
          : a && typeof a === 'object' && !Array.isArray(a)
            ? (a as Record<string, unknown>)
            : undefined
      if (!arg || typeof arg.name !== 'string' || !isArgName(arg.name))
        return '`args` entries must be names (letters, digits, _) or {name, description}'
      if (arg.name.toUpperCase() === 'ARGUMENTS') return '`ARGUMENTS` is reserved for the whole argument string'
      if (arg.description !== undefined && typeof arg.description !== 'string')
        return `\`args\`: the description of ${arg.name} must be a string`
      if (args.some((x) => x.name.toUpperCase() === (arg.name as string).toUpperCase()))
        return `\`args\`: ${arg.name} is declared twice`
      args.push({ name: arg.name, description: (arg.description as string | undefined) ?? '' })
    }
  }
  return { descriptor: { name, description, args, source }, template }
}

function firstLine(template: string): string {
  const line = template.split(/\r?\n/).find((l) => l.trim() !== '') ?? ''
  return line.trim().slice(0, 120)
}

/** The custom commands of one working directory (see the file header). */
export class CustomCommands implements CommandRenderer {
  readonly projectDir: string
  readonly userDir: string
  readonly #env: NodeJS.ProcessEnv
  readonly #cwd: string
  /** The scope of each directory, resolved (real paths) when a command file is first read. */
  #scopes: Map<string, DefinitionScope> | undefined
  readonly #cache = new Map<string, Parsed>()

  constructor(o: CustomCommandsOptions) {
    this.projectDir = projectCommandsDir(o.cwd)
    this.userDir = o.userDir ?? userCommandsDir(o.env)
    this.#env = o.env ?? process.env
    this.#cwd = o.cwd
  }

  /**
   * CommandRenderer: before a session takes prompts. The YAML parser the files' frontmatter
   * needs is loaded now (awaited) when a command directory exists, else in the background: a
   * session without commands answers without it (docs/decisions/0380-start-up-without-yaml-and-tools.md).
   */
  prepare(): Promise<void> | undefined {
    if (frontmatterParserLoaded()) return undefined
    if (existsSync(this.projectDir) || existsSync(this.userDir)) return loadFrontmatterParser()
    loadFrontmatterParserSoon()
    return undefined
  }

  /** Resolves when the command files can be read (`list`, `find`, `render`, `invoke` are synchronous). */
  ready(): Promise<void> {
    return loadFrontmatterParser()
  }

  /** Every command (project over user, by name) and every skipped file with its reason. */
  scan(): { commands: CommandDescriptor[]; problems: CommandProblem[] } {
    const byName = new Map<string, CommandDescriptor>()
    const problems: CommandProblem[] = []
    // User first, then project: a project command replaces a user one of the same name.
    for (const dir of [this.userDir, this.projectDir]) {
      for (const r of this.#scanDir(dir, problems)) byName.set(r.name, r)
    }
    const commands = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    return { commands, problems }
  }

  /** The `GET /commands` body (`problems` only when some file was skipped). */
  list(): CommandsListResponse {
    const { commands, problems } = this.scan()
    return problems.length ? { commands, problems } : { commands }
  }

  /** One command by name: the project's, else the user's (a malformed file is skipped). */
  find(name: string): { descriptor: CommandDescriptor; template: string } | undefined {
    if (!isCommandName(name) || RESERVED.has(name)) return undefined
    for (const dir of [this.projectDir, this.userDir]) {
      const p = this.#load(dir, join(dir, `${name}.md`), name)
      if (p?.command) return p.command
    }
    return undefined
  }

  /**
   * CommandRenderer: `/name args` (a typed argument string), or the invoke route's positional
   * list and named arguments. Undefined when there is no such command. Throws when the
   * argument string cannot be split (an unbalanced quote).
   */
  render(name: string, args: string): string | undefined
  render(name: string, args: readonly string[], kwargs?: Readonly<Record<string, string>>): string | undefined
  render(
    name: string,
    args: string | readonly string[],
    kwargs: Readonly<Record<string, string>> = {},
  ): string | undefined {
    const c = this.find(name)
    if (!c) return undefined
    const declared = c.descriptor.args.map((a) => a.name)
    const values: TemplateArgs =
      typeof args === 'string'
        ? parseArgumentString(args, declared)
        : { positional: args, named: kwargs, all: args.join(' ') }
    return renderTemplate(c.template, values, declared)
  }

  /**
   * The invoke route's work before the session is looked up: the body checked in the
   * document's order (`missing_session_id`, `args_must_be_list`, `kwargs_must_be_object`), the
   * command found (`command_not_found`) and rendered (`command_invoke_failed`). `arguments` is
   * the equivalent typed argument string, for the user message's `command` field.
   */
  invoke(name: string, body: unknown): { session_id: string; name: string; rendered: string; arguments: string } {
    const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>
    if (typeof b.session_id !== 'string' || b.session_id === '')
      throw new ChimeraError('missing_session_id', 'the body lacks session_id')
    const args = b.args ?? []
    if (!Array.isArray(args)) throw new ChimeraError('args_must_be_list', '`args` must be a JSON list')
    const kwargs = b.kwargs ?? {}
    if (typeof kwargs !== 'object' || kwargs === null || Array.isArray(kwargs))
      throw new ChimeraError('kwargs_must_be_object', '`kwargs` must be a JSON object')
    const c = this.find(name)
    if (!c)
      throw new ChimeraError('command_not_found', `no command named ${JSON.stringify(String(name).slice(0, 80))}`, {
        resource: String(name).slice(0, 200),
      })
    try {
      const positional = args.map(scalar)
      const named = Object.fromEntries(Object.entries(kwargs).map(([k, v]) => [k, scalar(v)]))
      const rendered = this.render(name, positional, named)
      if (rendered === undefined) throw new Error('the command file went away')
      return { session_id: b.session_id, name, rendered, arguments: argumentString(positional, named) }
    } catch (err) {
      if (ChimeraError.is(err, 'message_too_large')) throw err
      throw new ChimeraError('command_invoke_failed', `/${name}: ${(err as Error).message}`, {
        detail: (err as Error).message,
      })
    }
  }

  #scanDir(dir: string, problems: CommandProblem[]): CommandDescriptor[] {
    const listed = listDefinitionDir(dir, this.#scope(dir))
    if (!listed.ok) {
      if (listed.kind !== 'missing')
        problems.push({ source: dir, error: listed.kind === 'refused' ? `not read: ${listed.reason}` : listed.reason })
      return []
    }
    let names = listed.names.filter((n) => n.endsWith('.md')).sort()
    if (names.length > MAX_FILES) {
      problems.push({
        source: dir,
        error: `more than ${MAX_FILES} command files; only the first ${MAX_FILES} (by name) are read`,
      })
      names = names.slice(0, MAX_FILES)
    }
    const out: CommandDescriptor[] = []
    for (const file of names) {
      const name = file.slice(0, -3)
      const source = join(dir, file)
      if (!isCommandName(name)) {
        problems.push({
          source,
          error: 'the name must start with a letter and hold only letters, digits, _, . and - (at most 64)',
        })
        continue
      }
      if (RESERVED.has(name)) {
        problems.push({ source, error: `/${name} is a built-in command` })
        continue
      }
      const p = this.#load(dir, source, name)
      if (p?.command) out.push(p.command.descriptor)
      else if (p?.problem) problems.push({ source, error: p.problem })
    }
    return out
  }

  #scope(dir: string): DefinitionScope {
    // Not when the session is made: most sessions read no command file, and each real path is a
    // synchronous call.
    this.#scopes ??= new Map([
      [this.userDir, userScope(this.userDir, this.#env)],
      [this.projectDir, projectScope(this.#cwd, this.#env)],
    ])
    return this.#scopes.get(dir) as DefinitionScope
  }

  /** A command file of `dir`, parsed once per version; undefined when absent (or a directory). */
  #load(dir: string, source: string, name: string): Parsed | undefined {
    const r = readDefinitionFile(source, this.#scope(dir), MAX_FILE_BYTES)
    if (!r.ok) {
      this.#cache.delete(source)
      if (r.kind === 'missing' || r.kind === 'directory') return undefined
      return { key: '', problem: r.kind === 'refused' ? `not read: ${r.reason}` : r.reason }
    }
    const key = `${r.real}:${r.stat.ino}:${r.stat.size}:${r.stat.mtimeMs}`
    const cached = this.#cache.get(source)
    if (cached?.key === key) return cached
    const p = parseCommandFile(name, source, r.text)
    const parsed: Parsed = typeof p === 'string' ? { key, problem: p } : { key, command: p }
    this.#cache.set(source, parsed)
    return parsed
  }
}

/** A JSON scalar as template text; objects and arrays are refused. */
function scalar(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (v === null) return ''
  throw new Error('arguments must be strings, numbers or booleans')
}

/** The default `ManagerOptions.commands`: a `CustomCommands` per working directory. */
export function customCommands(o: { userDir?: string; env?: NodeJS.ProcessEnv } = {}): (cwd: string) => CustomCommands {
  return (cwd) => new CustomCommands({ cwd, ...o })
}
