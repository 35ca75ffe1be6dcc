/**
 * The one error type of the agent core and its features. A `ChimeraError` carries a domain code
 * (`DomainErrorCode`, specs/schemas/common.yaml: the spec lists every code once), a message for
 * people and, where a surface shows it, structured `detail` and the `resource` it names; never
 * an HTTP status or a wire shape. Each surface maps the code through one exhaustive table: HTTP
 * in server/http/errors.ts, ACP v1 and the seed dialect in server/acp/errors.ts, the JSON-lines
 * RPC in server/rpc/errors.ts (docs/decisions/0280-one-error-vocabulary.md).
 */
import type { DomainErrorCode } from '../generated/schemas.gen.ts'

export type { DomainErrorCode }

const BRAND = Symbol.for('chimera.error')

export interface ChimeraErrorOptions {
  /** Structured context a surface may show (HTTP `detail`). */
  detail?: unknown
  /** The thing the error names: a session id, a command name. */
  resource?: string
  cause?: unknown
}

export class ChimeraError<C extends DomainErrorCode = DomainErrorCode> extends Error {
  readonly code: C
  readonly detail: unknown
  readonly resource: string | undefined
  readonly [BRAND] = true
  constructor(code: C, message: string, opts: ChimeraErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'ChimeraError'
    this.code = code
    this.detail = opts.detail
    this.resource = opts.resource
  }

  /** True for a ChimeraError (also from a second copy of this module), optionally of one of `codes`. */
  static is<C extends DomainErrorCode>(x: unknown, ...codes: C[]): x is ChimeraError<C> {
    if (!(x instanceof ChimeraError) && !(typeof x === 'object' && x !== null && BRAND in x)) return false
    return codes.length === 0 || (codes as string[]).includes((x as ChimeraError).code)
  }
}

/** A short printable form of an untrusted id, for error messages. */
export function shownId(id: unknown): string {
  return JSON.stringify(String(id).slice(0, 160))
}

/** The session `id` does not exist, was deleted or is closed: the one definition every surface maps. */
export const sessionNotFound = (id: string): ChimeraError<'session_not_found'> =>
  new ChimeraError('session_not_found', `session not found: ${String(id).slice(0, 160)}`, { resource: id })
