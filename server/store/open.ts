/**
 * The event store of a Chimera home, for code that has no session manager (the CLI's read-only
 * commands) and for the manager's default: the file store under `<home>/eventlog`. Nothing
 * outside server/store names the file store or the event-log directory
 * (conformance/store-boundary.test.ts), so another engine replaces it here.
 */
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
