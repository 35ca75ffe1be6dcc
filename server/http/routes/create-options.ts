/**
 * The session options a create body may set, checked before anything is stored: a working
 * directory (absolute, an existing directory), a model some configured provider serves
 * (unknown or unconfigured: 400, as `models.check` says), known tools, a known mode. Every
 * failure is `400 invalid_body` naming the field.
 */
import { checkToolNames, type CreateOptions } from '../../core/manager.ts'
import { checkMode } from '../../core/modes.ts'
import type { HttpDeps } from '../deps.ts'
import { workingDirProblem } from '../../core/working-dir.ts'
import { HttpError } from '../errors.ts'

export interface CreateFields {
  cwd?: string
  model?: string
  mode?: string
  allowed_tools?: string[]
  max_steps?: number
  persist?: boolean
}

const bad = (field: string, message: string): HttpError =>
  new HttpError('invalid_body', `${field}: ${message}`, { detail: [{ path: field, message }] })

export function createOptions(deps: HttpDeps, f: CreateFields, cwdField = 'cwd'): CreateOptions {
  const o: CreateOptions = { persist: f.persist ?? true }
  if (f.cwd !== undefined) {
    const problem = workingDirProblem(f.cwd)
    if (problem !== undefined) throw bad(cwdField, problem)
    o.cwd = f.cwd
  }
  if (f.model !== undefined) {
    try {
      deps.manager.models.check(f.model)
    } catch (err) {
      throw bad('model', (err as Error).message)
    }
    o.model = f.model
  }
  if (f.mode !== undefined) {
    try {
      o.mode = checkMode(f.mode)
    } catch (err) {
      throw bad('mode', (err as Error).message)
    }
  }
  if (f.allowed_tools !== undefined) {
    try {
      checkToolNames(f.allowed_tools)
    } catch (err) {
      throw bad('allowed_tools', (err as Error).message)
    }
    o.allowedTools = f.allowed_tools
  }
  if (f.max_steps !== undefined) o.maxSteps = f.max_steps
  return o
}
