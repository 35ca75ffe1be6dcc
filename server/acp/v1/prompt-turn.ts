/**
 * `session/prompt`: the turn's `stopReason`, answered only after every update of the turn is on
 * the wire. `$/cancel_request` for the prompt cancels its turn; a turn that failed is an error.
 * On a network connection that closes, the answer is given up and the turn goes on.
 */
import { CODES, RpcError } from '../../../client/wire/jsonrpc/errors.ts'
import type { SessionRouter } from '../../core/session-router.ts'
import { ChimeraError } from '../../errors.ts'
import type { Logger } from '../../log.ts'
import type { Attachment } from './agent-types.ts'
import { promptText } from './prompt-text.ts'

const STOP: Record<string, 'end_turn' | 'max_tokens' | 'max_turn_requests' | 'refusal' | 'cancelled'> = {
  end_turn: 'end_turn',
  max_tokens: 'max_tokens',
  max_steps: 'max_turn_requests',
  refusal: 'refusal',
  cancelled: 'cancelled',
}

export async function promptTurn(
  a: Attachment,
  p: { sessionId: string; prompt: Parameters<typeof promptText>[0] },
  signal: AbortSignal,
  router: SessionRouter,
  logger: Logger,
  leaveOnClose = false,
) {
  const text = promptText(p.prompt)
  const id = a.session.id
  // Run where the session runs: here, or forwarded to the instance that holds it (its events
  // reach this connection's pump from the shared store all the same).
  const { messageId, done } = router.prompt(id, text)
  a.own.add(messageId)
  // `$/cancel_request` for this prompt cancels its turn (a closed connection does not).
  const onAbort = (): void => {
    if (RpcError.is(signal.reason) && signal.reason.code === CODES.requestCancelled) cancelTurn(router, id, logger)
  }
  signal.addEventListener('abort', onAbort, { once: true })
  // A network connection (leaveOnClose) that closes stops waiting for the turn, which goes on:
  // nobody is there to read its answer, and the connection must not wait for it to end.
  const closed = leaveOnClose
    ? new Promise<never>((_, reject) => {
        const leave = (): void => {
          if (!(RpcError.is(signal.reason) && signal.reason.code === CODES.requestCancelled))
            reject(new RpcError(CODES.internalError, 'the connection closed; the turn goes on'))
        }
        if (signal.aborted) leave()
        else signal.addEventListener('abort', leave, { once: true })
      })
    : undefined
  closed?.catch(() => undefined)
  try {
    const { outcome, lastSeq } = await (closed ? Promise.race([done, closed]) : done)
    await a.pump.delivered(lastSeq)
    // Refused credentials are -32000, the code on which a client offers its sign-in (acp-v1 §9).
    if (outcome.credentialsRefused)
      throw new RpcError(CODES.authRequired, 'Authentication required', { details: outcome.output })
    if (outcome.stop_reason === 'error')
      throw new RpcError(CODES.internalError, 'Internal error', { details: outcome.output })
    return { stopReason: STOP[outcome.stop_reason] ?? 'end_turn' }
  } catch (err) {
    // The instance running the session could not be reached or stopped while running the prompt:
    // the client is told why (and whether it may have run), as for a turn that failed.
    if (ChimeraError.is(err, 'store_unavailable'))
      throw new RpcError(CODES.internalError, 'Internal error', { details: err.message })
    throw err
  } finally {
    signal.removeEventListener('abort', onAbort)
    a.own.delete(messageId)
  }
}

/** Cancel the session's turn wherever it runs (a failure to reach its instance is logged: a cancel has no answer). */
export function cancelTurn(router: SessionRouter, id: string, logger: Logger): void {
  router.cancel(id).catch((err: unknown) => logger.warn(`session ${id}: the cancel did not reach its turn`, err))
}
