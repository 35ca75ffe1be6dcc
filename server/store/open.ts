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
export function openEventStore(home: string, opts: { logger?: Logger } = {}): EventStore {
  return new FileEventStore({ root: eventlogRoot(home), ...(opts.logger ? { logger: opts.logger } : {}) })
}
