/**
 * The project configuration `<cwd>/.chimera/config.json` (read once per session; tools cannot
 * write it — `.chimera/` is read-only to them):
 *
 * ```json
 * { "permission": { "Bash": "allow" },
 *   "env": { "PIP_INDEX_URL": "http://localhost:3141" },
 *   "env_passthrough": ["GOPATH"] }
 * ```
 *
 * `permission` sets tool rules (permissions.ts); `env` adds literal variables and
 * `env_passthrough` copies variables from the server's environment into every tool process,
 * whose environment is otherwise an allow-list (PATH, LANG, TERM, HOME, …).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface ProjectConfig {
  /** Raw `permission` object (validated by resolveRules). */
  permission?: unknown
  env: Record<string, string>
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

export function configPath(cwd: string): string {
  return join(cwd, '.chimera', 'config.json')
}

/** Read and check the project config; `{env: {}}` when there is none. Throws a clear Error when malformed. */
export function loadProjectConfig(cwd: string, processEnv: NodeJS.ProcessEnv = process.env): ProjectConfig {
  const path = configPath(cwd)
  if (!existsSync(path)) return { env: {} }
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    throw new Error(`${path}: not valid JSON (${(e as Error).message})`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${path}: must be a JSON object`)
  const cfg = parsed as Record<string, unknown>
  const env: Record<string, string> = {}
  if (Object.hasOwn(cfg, 'env')) {
    const e = cfg.env
    if (typeof e !== 'object' || e === null || Array.isArray(e))
      throw new Error(`${path}: "env" must be an object of NAME → string`)
    for (const [k, v] of Object.entries(e)) {
      if (!NAME.test(k) || typeof v !== 'string')
        throw new Error(`${path}: "env" entry ${JSON.stringify(k)} must be a variable name with a string value`)
      env[k] = v
    }
  }
  if (Object.hasOwn(cfg, 'env_passthrough')) {
    const p = cfg.env_passthrough
    if (!Array.isArray(p) || !p.every((n) => typeof n === 'string' && NAME.test(n)))
      throw new Error(`${path}: "env_passthrough" must be an array of variable names`)
    for (const n of p as string[]) {
      const v = processEnv[n]
      if (v !== undefined) env[n] = v
    }
  }
  return { ...(Object.hasOwn(cfg, 'permission') ? { permission: cfg.permission } : {}), env }
}
