/**
 * The environment of every process a tool starts (Bash, ripgrep, language servers): an allow
 * list, never the server's own environment. Provider keys, server tokens and `CHIMERA_*`
 * settings live in the server's environment and must not reach a command the model wrote.
 * What passes: PATH, LANG, LANGUAGE, LC_*, TERM, TZ, HOME (the sandbox home for confined
 * commands), and the extras the user configured (`ToolContext.toolEnv`), which are explicit.
 */

/** Names copied from the server's environment when set. */
export const PASSED_ENV_NAMES: readonly string[] = ['PATH', 'LANG', 'LANGUAGE', 'TERM', 'TZ']

/** PATH when the server has none. */
export const DEFAULT_TOOL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** What {@link toolProcessEnv} builds from. */
export interface ToolEnvOptions {
  /** HOME for the process (the sandbox home in the confined modes). */
  home: string
  /** The user's configured extras (`ToolContext.toolEnv`); they win over the passed names. */
  extra?: Readonly<Record<string, string>>
  /** The environment to pick from (default `process.env`). */
  base?: NodeJS.ProcessEnv
}

/** A name spawn accepts: non-empty, no `=`, no NUL. */
const validName = (name: string): boolean => name !== '' && !name.includes('=') && !name.includes('\0')

/**
 * The allow-listed environment for a tool process. A fresh object with only own properties, so
 * nothing inherited from `Object.prototype` can be looked up in it.
 */
export function toolProcessEnv(opts: ToolEnvOptions): Record<string, string> {
  const base = opts.base ?? process.env
  const env: Record<string, string> = Object.create(null)
  for (const name of PASSED_ENV_NAMES) {
    const v = Object.hasOwn(base, name) ? base[name] : undefined
    if (typeof v === 'string' && !v.includes('\0')) env[name] = v
  }
  for (const [name, v] of Object.entries(base)) {
    if (name.startsWith('LC_') && typeof v === 'string' && validName(name) && !v.includes('\0')) env[name] = v
  }
  env.PATH ??= DEFAULT_TOOL_PATH
  env.HOME = opts.home
  for (const [name, v] of Object.entries(opts.extra ?? {})) {
    if (validName(name) && typeof v === 'string' && !v.includes('\0')) env[name] = v
  }
  return { ...env }
}
