/**
 * The command handlers of `chimera code --mode rpc` (the document's `RpcHandler`), over one
 * agent-core session:
 * - `prompt` starts (or queues) a turn and is acknowledged when that turn ends: success for a
 *   finished turn, failure with the reason for an error, a cancel or `max_steps`;
 * - `steer` injects into the running turn; with no running turn it fails
 *   (docs/decisions/0008-rpc-steer-when-idle.md);
 * - `cancel` cancels the running turn (a no-op success when idle);
 * - `get_state` replies `{id, messages, model}`; `compact` summarises the history;
 * - `set_model` switches the model (an unknown model fails and the old one stays);
 * - `permission_reply` answers a pending permission request (`--approval ask`).
 */
import type { Session } from '../core/session.ts'
import { RpcCommandError, type RpcHandlers } from './server.ts'

const REASONS: Record<string, string> = {
  error: 'the turn failed',
  cancelled: 'the turn was cancelled',
  max_steps: 'the turn stopped at max_steps',
}

export function createRpcHandlers(session: Session): RpcHandlers {
  return {
    prompt: async (cmd) => {
      const outcome = await session.prompt(cmd.message).done
      if (!outcome.success) {
        const reason = REASONS[outcome.stop_reason] ?? outcome.stop_reason
        throw new RpcCommandError(outcome.stop_reason === 'error' && outcome.output ? `${reason}: ${outcome.output}` : reason)
      }
    },
    steer: async (cmd) => {
      if (!session.steer(cmd.message)) throw new RpcCommandError('no turn is running: send a prompt instead')
    },
    cancel: async () => {
      session.cancel()
    },
    get_state: async (cmd, ctx) => {
      await ctx.emit({ type: 'state', id: cmd.id ?? null, messages: session.messages(), model: session.model })
    },
    compact: async () => {
      try {
        await session.compact()
      } catch (err) {
        throw new RpcCommandError((err as Error).message)
      }
    },
    set_model: async (cmd) => {
      try {
        await session.setModel(cmd.model)
      } catch (err) {
        throw new RpcCommandError((err as Error).message)
      }
    },
    permission_reply: async (cmd) => {
      if (!session.replyPermission(cmd.request_id, cmd.decision, 'rpc')) throw new RpcCommandError(`no pending permission request "${cmd.request_id}"`)
    },
  }
}
