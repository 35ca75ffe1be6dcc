/**
 * Failures of session methods as each wire shows them: an unknown session, and the client's
 * own mistakes (an unknown or unconfigured model, an unknown mode, a message over the size limit) as Invalid params — never an
 * internal error. Errors are recognised by name so this module does not load the providers.
 */
import { RpcError, CODES } from '../../client/wire/jsonrpc/errors.ts'

const CLIENT_ERRORS = new Set(['UnknownModelError', 'ModelUnavailableError', 'SessionBusyError'])

/** A model or mode the client named that cannot be used; undefined for anything else. */
export function clientMistake(err: unknown): RpcError | undefined {
  if (!(err instanceof Error)) return undefined
  // A user message over the core's limit (server/core/message-limit.ts): the client's to shorten.
  if (err.name === 'MessageTooLargeError')
    return new RpcError(CODES.invalidParams, 'Invalid params', { error: 'message_too_large', detail: err.message })
  if (CLIENT_ERRORS.has(err.name) || /^unknown mode /.test(err.message))
    return new RpcError(CODES.invalidParams, 'Invalid params', { detail: err.message })
  return undefined
}

/** Rethrow a client mistake as Invalid params; anything else unchanged. */
export function asClientError(err: unknown): never {
  throw clientMistake(err) ?? err
}
