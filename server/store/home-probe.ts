/**
 * Whether a Chimera home can hold event logs: a file created and removed where the event log
 * lives. Apart from the store itself, so a server can check its home before it loads the store
 * (the HTTP server binds before the agent core loads: docs/decisions/0445-listen-before-the-app-loads.md).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { eventlogRoot } from './paths.ts'
import { scratchSuffix } from '../platform/random.ts'

/** Why the event log under `home` cannot be written, or undefined when it can. */
export async function eventLogProblem(home: string): Promise<string | undefined> {
  const root = eventlogRoot(home)
  const probe = join(root, `.write-probe-${scratchSuffix()}`)
  try {
    await mkdir(root, { recursive: true })
    await writeFile(probe, '', { flag: 'wx' })
    await rm(probe, { force: true })
    return undefined
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    const why =
      e.code === 'EROFS'
        ? 'read-only file system'
        : e.code === 'ENOSPC'
          ? 'no space left on device'
          : e.code === 'EACCES' || e.code === 'EPERM'
            ? 'permission denied'
            : e.message
    return `CHIMERA_HOME ${home} cannot hold event logs (${why}${e.code ? `, ${e.code}` : ''})`
  }
}
