/**
 * Compile-time checks of the error tables (run by `make typecheck`; nothing imports this file).
 * Every surface maps every domain code (specs/schemas/common.yaml `DomainErrorCode`) in one
 * table typed as a `Record` over the whole code union, so a code the spec gains is a compile
 * error until HTTP, ACP and the JSON-lines RPC each map it. If a mistake below compiles, its
 * `@ts-expect-error` is unused and tsc fails.
 */
import type { ErrorCode } from '../generated/schemas.gen.ts'
import { ACP_ERRORS, SEED_WIRE, V1_WIRE, type AcpErrorKind } from './acp/errors.ts'
import type { ChimeraError, DomainErrorCode } from './errors.ts'
import { DOMAIN_HTTP, type HttpErrorMapping } from './http/errors.ts'
import { HTTP_STATUS } from '../client/wire/http/errors.ts'
import type { WireError } from '../client/wire/jsonrpc/errors.ts'
import { RPC_ERRORS, type RpcErrorKind } from './rpc/errors.ts'

// The tables in use are complete: each is assignable to a Record over every code (a Partial is not).
export const complete: [
  Record<DomainErrorCode, HttpErrorMapping>,
  Record<ErrorCode, number>,
  Record<DomainErrorCode, AcpErrorKind>,
  Record<AcpErrorKind, (e: ChimeraError) => WireError>,
  Record<AcpErrorKind, (e: ChimeraError) => WireError>,
  Record<DomainErrorCode, RpcErrorKind>,
] = [DOMAIN_HTTP, HTTP_STATUS, ACP_ERRORS, V1_WIRE, SEED_WIRE, RPC_ERRORS]

// A code the spec gains is unmapped on every surface until each table names it.
type Grown = DomainErrorCode | 'brand_new_code'
// @ts-expect-error brand_new_code has no HTTP mapping
export const http: Record<Grown, HttpErrorMapping> = DOMAIN_HTTP
// @ts-expect-error brand_new_code has no ACP mapping
export const acp: Record<Grown, AcpErrorKind> = ACP_ERRORS
// @ts-expect-error brand_new_code has no JSON-lines RPC mapping
export const rpc: Record<Grown, RpcErrorKind> = RPC_ERRORS

// A new HTTP error code needs its status.
// @ts-expect-error brand_new_code has no status
export const status: Record<ErrorCode | 'brand_new_code', number> = HTTP_STATUS

// A new kind of ACP error needs its rendering on both dialects.
// @ts-expect-error conflict is not rendered by ACP v1
export const v1: Record<AcpErrorKind | 'conflict', (e: ChimeraError) => WireError> = V1_WIRE

// HTTP maps a domain code to a code of the HTTP spec only.
// @ts-expect-error made_up is not an ErrorCode
export const wrongHttp: HttpErrorMapping = { error: 'made_up' }
