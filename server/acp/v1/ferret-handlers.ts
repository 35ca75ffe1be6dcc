/** docs/zed.md's ferret session methods under `_ferret/` (same behaviour as the seed dialect), served to a ferret agent's client. */
import type { Session } from '../../core/session.ts'
import type { SessionRouter } from '../../core/session-router.ts'
import type { HandlersFor } from '../../jsonrpc/dispatcher.ts'
import type { BridgeStatus } from '../../../generated/schemas.gen.ts'
import { bridgeStatus } from '../dialect.ts'
import type { FerretMethods, V1Table } from './agent-types.ts'

/**
 * `session`: the open session of this connection with that id (throws Resource not found);
 * `router`: runs the approval change where the session runs (core/session-router.ts);
 * `bridge`: the process's cloud bridge (docs/bridge.md), absent when none is configured.
 */
export function ferretHandlers(
  session: (id: string) => Session,
  router: Pick<SessionRouter, 'setApproval'>,
  bridge?: () => BridgeStatus,
): HandlersFor<V1Table, FerretMethods> {
  return {
    '_ferret/session/setSandbox': (p) => {
      const s = session(p.sessionId)
      if (p.mode === undefined || p.mode === s.sandbox) return { mode: s.sandbox, restartRequired: false }
      return {
        mode: s.sandbox,
        restartRequired: true,
        message: `restart required: the sandbox is fixed at launch (--sandbox ${p.mode})`,
      }
    },
    '_ferret/session/setApproval': (p) => router.setApproval(session(p.sessionId).id, p.approval),
    '_ferret/session/bridgeStatus': (p) => {
      session(p.sessionId)
      return bridgeStatus(bridge)
    },
  }
}
