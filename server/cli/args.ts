/** Small helpers over citty's parsed arguments. */

export class UsageError extends Error {
  override name = 'UsageError'
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
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be an integer 0-65535, got ${JSON.stringify(value)}`)
  return n
}

/** `Read,Grep,Bash` → ['Read', 'Grep', 'Bash'] (blank entries dropped). */
export function parseList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  return value.split(',').map((s) => s.trim()).filter(Boolean)
}
