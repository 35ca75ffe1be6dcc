/**
 * Typed requests to the peer, from a generated method table: `request(method, params)` takes the
 * params the method's validator accepts and resolves to its result as the validator outputs it.
 * The peer is not trusted: its answer is checked against the method's result schema, and one that
 * does not match rejects (an RpcError, Internal error) naming the method and the mismatch.
 */
import type { z } from 'zod'
import { formatIssues } from '../../client/wire/issues.ts'
import type { Connection } from '../../client/wire/jsonrpc/connection.ts'
import { CODES, RpcError } from '../../client/wire/jsonrpc/errors.ts'
import type { MethodTable, Outbound } from './dispatcher.ts'

/** What the peer's answer to `S` is once checked (void for a method with no result). */
export type PeerResult<S extends MethodTable[string]> = S['result'] extends z.ZodType ? z.output<S['result']> : void

export interface Peer<T extends MethodTable> {
  request<M extends Outbound<T>>(
    method: M,
    params: z.input<T[M]['params']>,
    opts?: { signal?: AbortSignal },
  ): Promise<PeerResult<T[M]>>
}

export function typedPeer<T extends MethodTable>(conn: Pick<Connection, 'request'>, table: T): Peer<T> {
  return {
    async request(method, params, opts) {
      const raw = await conn.request(method, params, opts)
      const schema = table[method]?.result
      if (!schema) return undefined as never
      const parsed = schema.safeParse(raw ?? {})
      if (!parsed.success) {
        const why = formatIssues(parsed.error)
        throw new RpcError(
          CODES.internalError,
          `the client's answer to ${method} does not match the ACP schema (${why})`,
        )
      }
      return parsed.data as never
    },
  }
}
