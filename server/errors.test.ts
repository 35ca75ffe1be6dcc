/**
 * The one error vocabulary: the spec's domain codes are exactly the keys of every surface's
 * table, and each surface shows a domain error as it did before the tables (HTTP status and body,
 * the ACP v1 and seed JSON-RPC errors, the JSON-lines RPC's failure text and logging).
 */
import { describe, expect, it } from 'vitest'
import { DomainErrorCodeSchema, ErrorCodeSchema } from '../generated/schemas.gen.ts'
import { ACP_ERRORS, acpError, seedInternalError, v1InternalError } from './acp/errors.ts'
import { ChimeraError, sessionNotFound } from './errors.ts'
import { DOMAIN_HTTP, errorResponse, HttpError } from './http/errors.ts'
import { HTTP_STATUS } from '../client/wire/http/errors.ts'
import type { Logger } from './log.ts'
import { RPC_ERRORS, RpcCommandError, rpcFailure } from './rpc/errors.ts'

const sorted = (xs: readonly string[]): string[] => [...xs].sort()

function recorder(): Logger & { errors: unknown[] } {
  const errors: unknown[] = []
  return { errors, debug() {}, info() {}, warn() {}, error: (_m: string, e?: unknown) => void errors.push(e) }
}

async function http(err: unknown): Promise<{ status: number; body: unknown; logged: number }> {
  const log = recorder()
  const res = errorResponse(err, log)
  return { status: res.status, body: await res.json(), logged: log.errors.length }
}

describe('the domain codes', () => {
  it('are the spec enum, and every surface table has exactly those keys', () => {
    const codes = sorted(DomainErrorCodeSchema.options)
    for (const table of [DOMAIN_HTTP, ACP_ERRORS, RPC_ERRORS]) expect(sorted(Object.keys(table))).toEqual(codes)
    expect(sorted(Object.keys(HTTP_STATUS))).toEqual(sorted(ErrorCodeSchema.options))
  })

  it('a ChimeraError is recognised by its brand, also from a second copy of the module', () => {
    const other = { [Symbol.for('chimera.error')]: true, code: 'session_busy', message: 'm' }
    expect(ChimeraError.is(other)).toBe(true)
    expect(ChimeraError.is(other, 'session_busy')).toBe(true)
    expect(ChimeraError.is(other, 'session_not_found')).toBe(false)
    expect(ChimeraError.is(Object.assign(new Error('x'), { code: 'session_busy' }))).toBe(false)
  })
})

describe('HTTP', () => {
  it('maps each domain code to its ErrorCode and status, keeping message, detail and name', async () => {
    expect(await http(new ChimeraError('invalid_share', 'url must be http or https'))).toEqual({
      status: 400,
      body: { error: 'invalid_body', message: 'url must be http or https' },
      logged: 0,
    })
    const failed = new ChimeraError('share_failed', 'returned 500', { detail: { status_code: 500, reply: 'x' } })
    expect(await http(failed)).toMatchObject({
      status: 502,
      body: { error: 'share_failed', detail: { status_code: 500 } },
    })
    const missing = new ChimeraError('command_not_found', 'no command named "x"', { resource: 'x' })
    expect(await http(missing)).toMatchObject({ status: 404, body: { error: 'command_not_found', name: 'x' } })
    expect(await http(new ChimeraError('invalid_query', 'limit: bad', { detail: 'limit: bad' }))).toMatchObject({
      status: 400,
      body: { error: 'invalid_query', detail: 'limit: bad' },
    })
    expect((await http(new ChimeraError('runs_cost_failed', 'x'))).status).toBe(500)
    expect(await http(new ChimeraError('prompt_not_recorded', 'ENOSPC'))).toMatchObject({
      status: 507,
      body: { error: 'storage_full' },
    })
    expect(await http(new ChimeraError('session_busy', 'busy'))).toMatchObject({ status: 409 })
    // Redis unreachable: 503 with the store's Retry-After; a bad listing cursor names the parameter.
    const down = new ChimeraError('store_unavailable', 'the Redis store is unavailable', {
      detail: { retry_after_s: 2 },
    })
    const res = errorResponse(down, recorder())
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('2')
    const cursor = new ChimeraError('invalid_cursor', 'unknown cursor', {
      detail: [{ path: 'cursor', message: 'unknown cursor' }],
    })
    expect(await http(cursor)).toMatchObject({ status: 400, body: { error: 'invalid_query' } })
    const large = new ChimeraError('message_too_large', 'too big', { detail: { limit_bytes: 1 } })
    expect(await http(large)).toMatchObject({
      status: 413,
      body: { error: 'message_too_large', detail: { limit_bytes: 1 } },
    })
  })

  it('an unknown session is 404 session_not_found, without naming the id as a resource', async () => {
    expect(await http(sessionNotFound('otter-x'))).toEqual({
      status: 404,
      body: { error: 'session_not_found', message: 'session not found: otter-x' },
      logged: 0,
    })
  })

  it('a store failure is a masked, logged 500', async () => {
    expect(await http(new ChimeraError('store_full', 'the store is full'))).toEqual({
      status: 500,
      body: { error: 'internal_error', message: 'internal server error' },
      logged: 1,
    })
  })

  it("an HttpError's status comes from the table, or h3's own status", async () => {
    expect(new HttpError('misdirected_request').status).toBe(421)
    expect(errorResponse(new HttpError('bad_request', 'x'), recorder(), 414).status).toBe(414)
  })
})

describe('ACP', () => {
  it('an unknown session: -32002 on v1, the seed agent error named SessionNotFound', () => {
    expect(acpError(sessionNotFound('otter-x'), 'acp-v1')?.toJSON()).toEqual({
      code: -32002,
      message: 'Resource not found',
      data: { sessionId: 'otter-x' },
    })
    expect(acpError(sessionNotFound('otter-x'), 'seed')?.toJSON()).toEqual({
      code: -32000,
      message: 'Agent error',
      data: { name: 'SessionNotFound', message: 'session not found: otter-x' },
    })
  })

  it('an unknown listing cursor is Invalid params naming the cursor, as the store branch pinned it', () => {
    const e = new ChimeraError('invalid_cursor', 'unknown cursor', {
      detail: [{ path: 'cursor', message: 'unknown cursor' }],
    })
    expect(acpError(e, 'acp-v1')?.toJSON()).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: { issues: [{ path: 'cursor', message: 'unknown cursor' }] },
    })
  })

  it("the client's mistakes are Invalid params on both wires", () => {
    for (const dialect of ['acp-v1', 'seed'] as const) {
      expect(acpError(new ChimeraError('unknown_mode', 'unknown mode "x"'), dialect)?.toJSON()).toEqual({
        code: -32602,
        message: 'Invalid params',
        data: { detail: 'unknown mode "x"' },
      })
      expect(acpError(new ChimeraError('message_too_large', 'too big'), dialect)?.toJSON()).toEqual({
        code: -32602,
        message: 'Invalid params',
        data: { error: 'message_too_large', detail: 'too big' },
      })
    }
  })

  it("the agent's own failures: masked on v1, named on the seed wire", () => {
    const full = new ChimeraError('store_full', 'full')
    expect(acpError(full, 'acp-v1')).toBeUndefined()
    expect(v1InternalError(full)).toEqual({ code: -32603, message: 'Internal error' })
    expect(v1InternalError(new Error('secret'))).toEqual({ code: -32603, message: 'Internal error' })
    expect(seedInternalError(full)).toEqual({
      code: -32000,
      message: 'Agent error',
      data: { name: 'StoreFull', message: 'full' },
    })
    // The seed's data.name for a refusal of the core is its domain code in PascalCase (acp-seed.openrpc.yaml).
    expect(seedInternalError(new ChimeraError('session_closed', 'closed'))).toMatchObject({
      data: { name: 'SessionClosed' },
    })
    expect(seedInternalError(new TypeError('boom'))).toEqual({
      code: -32000,
      message: 'Agent error',
      data: { name: 'TypeError', message: 'boom' },
    })
  })
})

describe('JSON-lines RPC', () => {
  it("answers with the message; logs only the agent's own failures", () => {
    expect(rpcFailure(new ChimeraError('unknown_model', 'unknown model "x"'))).toEqual({
      error: 'unknown model "x"',
      agent: false,
    })
    expect(rpcFailure(new ChimeraError('prompt_not_recorded', 'ENOSPC'))).toEqual({ error: 'ENOSPC', agent: true })
    expect(rpcFailure(new RpcCommandError('no turn is running'))).toEqual({ error: 'no turn is running', agent: false })
    expect(rpcFailure(new Error('bug'))).toEqual({ error: 'bug', agent: true })
  })
})
