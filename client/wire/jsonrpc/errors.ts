/**
 * Errors that cross the JSON-RPC wire. `RpcError` carries a code from the specs (generated
 * tables, never a literal), a message and optional data. `toWireError` is the single funnel
 * every dispatch failure goes through: an RpcError passes as is, a zod error becomes Invalid
 * params with its issues, anything else is masked by the dialect's `internal` mapping (its
 * details go to the injected logger, never to the peer).
 */
import { ACP_V1_ERRORS } from '../../../generated/acp/v1-constants.gen.ts'

/** Standard JSON-RPC 2.0 codes (identical in every dialect; the v1 spec lists them). */
export const CODES = {
  parseError: ACP_V1_ERRORS.ParseError,
  invalidRequest: ACP_V1_ERRORS.InvalidRequest,
  methodNotFound: ACP_V1_ERRORS.MethodNotFound,
  invalidParams: ACP_V1_ERRORS.InvalidParams,
  internalError: ACP_V1_ERRORS.InternalError,
  requestCancelled: ACP_V1_ERRORS.RequestCancelled,
  resourceNotFound: ACP_V1_ERRORS.ResourceNotFound,
  authRequired: ACP_V1_ERRORS.AuthenticationRequired,
} as const

export interface WireError {
  code: number
  message: string
  data?: unknown
}

export class RpcError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.name = 'RpcError'
    this.code = code
    this.data = data
  }

  /** True for any RpcError, even one from a second copy of this module. */
  static is(x: unknown): x is RpcError {
    return (
      x instanceof RpcError ||
      (typeof x === 'object' &&
        x !== null &&
        (x as Error).name === 'RpcError' &&
        typeof (x as RpcError).code === 'number')
    )
  }

  toJSON(): WireError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data }
  }

  static parseError(detail?: string): RpcError {
    return new RpcError(CODES.parseError, 'Parse error', detail ? { detail } : undefined)
  }
  static invalidRequest(detail?: string): RpcError {
    return new RpcError(CODES.invalidRequest, 'Invalid request', detail ? { detail } : undefined)
  }
  static methodNotFound(method: string): RpcError {
    return new RpcError(CODES.methodNotFound, 'Method not found', { method })
  }
  static invalidParams(issues: unknown): RpcError {
    return new RpcError(CODES.invalidParams, 'Invalid params', { issues })
  }
}

/** Maps an error that is not an RpcError to what the peer sees (dialect-specific). */
export type InternalErrorMapper = (err: unknown) => WireError

/** Every failure as Internal error, its message masked (ACP v1, and any ACP wire before a dialect is chosen). */
export const maskInternal: InternalErrorMapper = () => ({ code: CODES.internalError, message: 'Internal error' })

export function toWireError(err: unknown, mapInternal: InternalErrorMapper): WireError {
  if (RpcError.is(err)) return err.toJSON()
  return mapInternal(err)
}
