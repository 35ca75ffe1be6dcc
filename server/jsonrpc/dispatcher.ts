/**
 * Table-driven dispatch: a generated method table (name → direction, kind, params validator)
 * plus a handler object. Inbound params are validated with the generated zod validator before
 * the handler runs; a failure is Invalid params with the issue paths. A method the table lacks,
 * or one the dialect does not serve, is Method not found.
 */
import type { ZodType, z } from 'zod'
import { issueRows } from '../../client/wire/issues.ts'
import { RpcError } from '../../client/wire/jsonrpc/errors.ts'

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

/** A method's params as its generated validator outputs them (what a handler receives). */
export type ParamsOf<S extends MethodSpec> = z.output<S['params']>
/** A method's result as its generated validator accepts it (what a handler returns); void for a notification. */
export type ResultOf<S extends MethodSpec> = S['result'] extends ZodType ? z.input<S['result']> : void
/** The handler of one method of a generated table: typed params in, typed result out. */
export type TypedHandler<S extends MethodSpec> = (
  params: ParamsOf<S>,
  ctx: CallContext,
) => ResultOf<S> | Promise<ResultOf<S>>
/** The methods of a table an agent receives: everything not sent only by the agent. */
export type Inbound<T extends MethodTable> = {
  [K in keyof T]: T[K]['direction'] extends 'agent-to-client' ? never : K
}[keyof T] &
  string
/** The methods of a table an agent sends to its client (`fs/*`, `terminal/*`, permission requests). */
export type Outbound<T extends MethodTable> = {
  [K in keyof T]: T[K]['direction'] extends 'client-to-agent' ? never : K
}[keyof T] &
  string
/**
 * One handler per method in `K` (by default every inbound method of the table): a method the
 * spec adds without a handler, a wrong params type or a wrong result is a compile error.
 */
export type HandlersFor<T extends MethodTable, K extends keyof T = Inbound<T>> = {
  readonly [M in K]: TypedHandler<T[M]>
}

/** The dispatcher's erased view: params were validated against the method's schema first. */
type ErasedHandler = (params: unknown, ctx: CallContext) => unknown

export class Dispatcher<T extends MethodTable = MethodTable> {
  readonly table: T
  readonly handlers: Readonly<Record<string, ErasedHandler>>
  readonly served: ReadonlySet<string>

  /** `served` limits the table to the methods this endpoint implements and receives. */
  constructor(
    table: T,
    handlers: Partial<HandlersFor<T>>,
    accept: (name: string, spec: MethodSpec) => boolean = () => true,
  ) {
    this.table = table
    // The one place typed handlers meet untyped input: `call` validates params with the
    // method's own schema before a handler sees them, so the erased view is sound.
    this.handlers = handlers as Readonly<Record<string, ErasedHandler>>
    this.served = new Set(
      Object.entries(table)
        .filter(
          ([name, spec]) => spec.direction !== 'agent-to-client' && accept(name, spec) && Object.hasOwn(handlers, name),
        )
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
