/**
 * The state of a git checkout as `git status --porcelain` shows it (plus the content hash of
 * every untracked or modified file, so editing an already-modified file counts too); undefined
 * outside a git checkout or without git. Used to prove a test run wrote nothing into the checkout.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

export function checkoutState(root: string): string | undefined {
  let status: string
  try {
    status = execFileSync('git', ['status', '--porcelain=v1', '-z', '--untracked-files=all'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
  } catch {
    return undefined
  }
  const entries = status.split('\0').filter(Boolean)
  return entries
    .map((e) => {
      const file = join(root, e.slice(3))
      const hash =
        existsSync(file) && statSync(file).isFile()
          ? createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16)
          : '-'
      return `${e} ${hash}`
    })
    .sort()
    .join('\n')
}

/** The lines that differ between two states (`+` new, `-` gone), or '' when none. */
export function describeChanges(before: string, after: string): string {
  const a = new Set(before.split('\n').filter(Boolean))
  const b = new Set(after.split('\n').filter(Boolean))
  return [
    ...[...b].filter((l) => !a.has(l)).map((l) => `+ ${l}`),
    ...[...a].filter((l) => !b.has(l)).map((l) => `- ${l}`),
  ].join('\n')
}
