/**
 * The event store of a Chimera home, for code that has no session manager (the CLI's read-only
 * commands) and for the manager's default: the file store under `<home>/eventlog`. Nothing
 * outside server/store names the file store or the event-log directory
 * (conformance/store-boundary.test.ts), so another engine replaces it here.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from '../log.ts'
import { FileEventStore } from './file-store.ts'
import { eventlogRoot } from './paths.ts'
import type { EventStore } from './types.ts'

/** The store of the sessions under `home` (`chimeraHome()` by default in callers). */
export function openEventStore(home: string, opts: { logger?: Logger; agent?: string } = {}): EventStore {
  return new FileEventStore({
    root: eventlogRoot(home),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.agent ? { agent: opts.agent } : {}),
  })
}

/**
 * Run `use` over the store the environment names: the Redis store of `CHIMERA_STORE`
 * (`redis://host:port/db`; connected for the call, then closed; an unreachable one is an error
 * saying so) or, unset or `file`, the file store under `home`. For the CLI's read-only commands.
 */
export async function withConfiguredStore<T>(
  home: string,
  use: (store: EventStore) => Promise<T>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T> {
  if (!env.CHIMERA_STORE || env.CHIMERA_STORE === 'file') return use(openEventStore(home))
  const { RedisEventStore, storeUrl } = await import('./redis-store.ts')
  const url = storeUrl(undefined, env)!
  const store = new RedisEventStore({ url })
  await store.connect()
  try {
    return await use(store)
  } finally {
    await store.close()
  }
}

/** Why the event log under `home` cannot be written, or undefined when it can. */
export async function eventLogProblem(home: string): Promise<string | undefined> {
  const root = eventlogRoot(home)
  const probe = join(root, `.write-probe-${process.pid}-${randomUUID().slice(0, 8)}`)
  try {
    await mkdir(root, { recursive: true })
    await writeFile(probe, '')
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
