/** Small helpers over citty's parsed arguments, and the strict flag check citty lacks. */
import type { ArgsDef } from 'citty'

export class UsageError extends Error {
  override name = 'UsageError'
}

/** A command that has said what it had to and ends with a non-zero exit code. */
export class ExitStatus extends Error {
  override name = 'ExitStatus'
  readonly code: number
  constructor(code: number) {
    super(`exit ${code}`)
    this.code = code
  }
}

/** Every value of a repeatable string flag (`--cors a --cors b`, `--cors=a`), in order. */
export function repeatable(rawArgs: readonly string[], flag: string): string[] {
  const out: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!
    if (a === flag && i + 1 < rawArgs.length) out.push(rawArgs[++i]!)
    else if (a.startsWith(`${flag}=`)) out.push(a.slice(flag.length + 1))
  }
  return out
}

/** A TCP port from a flag value; throws UsageError when it is not 0–65535. */
export function parsePort(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new UsageError(`--port must be an integer 0-65535, got ${JSON.stringify(value)}`)
  return n
}

/** `Read,Grep,Bash` → ['Read', 'Grep', 'Bash'] (blank entries dropped). */
export function parseList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/**
 * Refuse what citty would silently accept: an option the command does not declare, a value
 * missing after an option that takes one, an enum value outside its options, and positional
 * arguments the command does not take. `rawArgs` are the arguments after the command path.
 */
export function checkArgs(rawArgs: readonly string[], def: ArgsDef, command: string): void {
  const byName = new Map<string, { type?: string; options?: readonly string[] }>()
  for (const [name, d] of Object.entries(def)) {
    const spec = d as { type?: string; alias?: string | string[]; options?: readonly string[] }
    byName.set(name, spec)
    for (const a of [spec.alias ?? []].flat()) byName.set(a, spec)
  }
  const positionals = Object.values(def).filter((d) => (d as { type?: string }).type === 'positional').length
  let seenPositionals = 0
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!
    if (a === '--') break
    if (!a.startsWith('-') || a === '-' || /^-\d/.test(a)) {
      if (++seenPositionals > positionals) throw new UsageError(`${command}: unexpected argument ${JSON.stringify(a)}`)
      continue
    }
    const body = a.replace(/^--?/, '')
    const eq = body.indexOf('=')
    let name = eq === -1 ? body : body.slice(0, eq)
    let spec = byName.get(name)
    if (!spec && name.startsWith('no-') && byName.get(name.slice(3))?.type === 'boolean') {
      name = name.slice(3)
      spec = byName.get(name)
    }
    if (!spec || spec.type === 'positional') throw new UsageError(`${command}: unknown option ${a.split('=')[0]}`)
    if (spec.type === 'boolean') {
      if (eq !== -1 && !['true', 'false'].includes(body.slice(eq + 1)))
        throw new UsageError(`${command}: --${name} takes no value`)
      continue
    }
    let value: string | undefined
    if (eq !== -1) value = body.slice(eq + 1)
    else {
      value = rawArgs[i + 1]
      if (value === undefined || (value.startsWith('--') && value.length > 2))
        throw new UsageError(`${command}: --${name} needs a value`)
      i++
    }
    if (spec.type === 'enum' && spec.options && !spec.options.includes(value)) {
      throw new UsageError(
        `${command}: --${name} must be one of ${spec.options.join(', ')}, got ${JSON.stringify(value)}`,
      )
    }
  }
}
