/**
 * Table-driven dispatch: a generated method table (name → direction, kind, params validator)
 * plus a handler object. Inbound params are validated with the generated zod validator before
 * the handler runs; a failure is Invalid params with the issue paths. A method the table lacks,
 * or one the dialect does not serve, is Method not found.
 */
import type { ZodType } from 'zod'
import { issueRows } from '../validation.ts'
import { RpcError } from './errors.ts'

export interface MethodSpec {
  readonly direction: string
  readonly kind: string
  readonly params: ZodType
  readonly result: ZodType | null
  readonly errors: readonly number[]
  readonly dialects?: readonly string[]
}
export type MethodTable = Readonly<Record<string, MethodSpec>>

/** What a handler receives besides its params. */
export interface CallContext {
  /** Aborted when the peer cancels this request or the connection closes. */
  signal: AbortSignal
  /** The JSON-RPC id, or undefined for a notification. */
  id?: string | number | null
}

export type Handler = (params: any, ctx: CallContext) => unknown
export type Handlers = Readonly<Record<string, Handler>>

export class Dispatcher {
  readonly table: MethodTable
  readonly handlers: Handlers
  readonly served: ReadonlySet<string>

  /** `served` limits the table to the methods this endpoint implements and receives. */
  constructor(table: MethodTable, handlers: Handlers, accept: (name: string, spec: MethodSpec) => boolean = () => true) {
    this.table = table
    this.handlers = handlers
    this.served = new Set(
      Object.entries(table)
        .filter(([name, spec]) => spec.direction !== 'agent-to-client' && accept(name, spec) && Object.hasOwn(handlers, name))
        .map(([name]) => name),
    )
  }

  /** Validate params and run the handler; throws RpcError for protocol failures. */
  async call(method: string, params: unknown, ctx: CallContext): Promise<unknown> {
    if (!this.served.has(method)) throw RpcError.methodNotFound(method)
    const spec = this.table[method]!
    const parsed = spec.params.safeParse(params ?? {})
    if (!parsed.success) throw RpcError.invalidParams(issueRows(parsed.error))
    const result = await this.handlers[method]!(parsed.data, ctx)
    return result ?? {}
  }
}
