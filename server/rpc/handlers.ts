/**
 * The command handlers of `chimera code --mode rpc` (the document's `RpcHandler`), over one
 * agent-core session:
 * - `prompt` starts (or queues) a turn and is acknowledged when that turn ends: success for a
 *   finished turn, failure with the reason for an error, a cancel or `max_steps`; a prompt
 *   that is `/undo` or `/redo` rewinds turns (its reply line streams as the final message);
 * - `steer` injects into the running turn; with no running turn it fails
 *   (docs/decisions/0008-rpc-steer-and-prompt-acks.md);
 * - `cancel` cancels the running turn (a no-op success when idle);
 * - `get_state` replies `{id, messages, model}` in its place among the replies (after the
 *   commands before it); `compact` summarises the history;
 * - `set_model` switches the model (an unknown model fails and the old one stays);
 * - `permission_reply` answers a pending permission request (`--approval ask`).
 */
import type { Session } from '../core/session.ts'
import { RpcCommandError } from './errors.ts'
import type { RpcHandlers } from './rpc-server.ts'

const REASONS: Record<string, string> = {
  error: 'the turn failed',
  cancelled: 'the turn was cancelled',
  max_steps: 'the turn stopped at max_steps',
  max_tokens: 'the model stopped at its output token limit',
  refusal: 'the model refused',
}

/**
 * `delivered(seq)` resolves once the events up to `seq` are on the wire, so a command's events
 * precede its acknowledgement (the document's "event, then response").
 */
export function createRpcHandlers(
  session: Session,
  delivered: (seq: number) => Promise<void> = async () => {},
): RpcHandlers {
  return {
    prompt: async (cmd) => {
      // A message over the size limit (`message_too_large`) fails the command with its reason.
      // Answered once the turn's events are on disk (its undo snapshot and summary follow).
      const submitted = session.prompt(cmd.message)
      const outcome = await (submitted.ended ?? submitted.done)
      await delivered(session.lastSeq)
      if (!outcome.success) {
        const reason = Object.hasOwn(REASONS, outcome.stop_reason) ? REASONS[outcome.stop_reason]! : outcome.stop_reason
        throw new RpcCommandError(
          outcome.stop_reason === 'error' && outcome.output
            ? `${reason}: ${outcome.output}`
            : outcome.stop_reason === 'end_turn'
              ? outcome.output
              : reason,
        )
      }
    },
    steer: async (cmd) => {
      if (!(await session.steer(cmd.message))) throw new RpcCommandError('no turn is running: send a prompt instead')
    },
    cancel: async () => {
      session.cancel()
    },
    get_state: async (cmd, ctx) => {
      ctx.reply(() => ({ type: 'state', id: cmd.id ?? null, messages: session.messages(), model: session.model }))
    },
    compact: async () => {
      await session.compact()
      await delivered(session.lastSeq)
    },
    set_model: async (cmd) => {
      await session.setModel(cmd.model)
      await delivered(session.lastSeq)
    },
    permission_reply: async (cmd) => {
      if (!session.replyPermission(cmd.request_id, cmd.decision, 'rpc'))
        throw new RpcCommandError(`no pending permission request "${cmd.request_id}"`)
    },
  }
}
