/**
 * The check every transport makes on a working directory a client names for a new session
 * (HTTP `cwd` / `working_dir`, ACP `session/new` `cwd`): an absolute path to an existing
 * directory. Each wire shows the reason its own way (HTTP 400 `invalid_body`, JSON-RPC -32602).
 */
import { statSync } from 'node:fs'
import { isAbsolute } from 'node:path'

/** Why `cwd` cannot be a session's working directory, or undefined when it can. */
export function workingDirProblem(cwd: string): string | undefined {
  if (!isAbsolute(cwd)) return 'must be an absolute path'
  if (cwd.includes('\0') || !statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
    return 'is not an existing directory'
  return undefined
}
