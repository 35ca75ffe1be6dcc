/**
 * JSON-RPC 2.0 message classification (spec §4–5): a parsed JSON value becomes a request, a
 * notification, a response, or an invalid message with the error to answer. Batches are not
 * supported (ACP v1 stdio rejects them): an array is answered with one Invalid request.
 */
import { RpcError } from './errors.ts'

export type Id = string | number | null

export type Incoming =
  | { kind: 'request'; id: Id; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: Id; result?: unknown; error?: { code: number; message: string; data?: unknown } }
  | { kind: 'invalid'; id: Id; error: RpcError }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A valid id: string, null, or a number that round-trips (no precision lost to JSON.parse). */
function validId(v: unknown): v is Id {
  if (v === null || typeof v === 'string') return true
  if (typeof v !== 'number' || !Number.isFinite(v)) return false
  return Number.isInteger(v) ? Number.isSafeInteger(v) : true
}

export function classify(value: unknown): Incoming {
  if (Array.isArray(value))
    return { kind: 'invalid', id: null, error: RpcError.invalidRequest('JSON-RPC batches are not supported') }
  if (!isObject(value))
    return { kind: 'invalid', id: null, error: RpcError.invalidRequest('a message must be a JSON object') }
  const hasId = 'id' in value
  const id: Id = hasId && validId(value.id) ? value.id : null
  if (hasId && !validId(value.id)) {
    return { kind: 'invalid', id: null, error: RpcError.invalidRequest('id must be a string, a safe integer, or null') }
  }
  if (value.jsonrpc !== '2.0') return { kind: 'invalid', id, error: RpcError.invalidRequest('"jsonrpc" must be "2.0"') }
  if ('method' in value) {
    if (typeof value.method !== 'string')
      return { kind: 'invalid', id, error: RpcError.invalidRequest('"method" must be a string') }
    if ('params' in value && value.params !== undefined && !isObject(value.params) && !Array.isArray(value.params)) {
      return { kind: 'invalid', id, error: RpcError.invalidRequest('"params" must be an object or an array') }
    }
    const params = value.params
    return hasId
      ? { kind: 'request', id, method: value.method, params }
      : { kind: 'notification', method: value.method, params }
  }
  if (hasId && ('result' in value || 'error' in value)) {
    if ('result' in value && 'error' in value)
      return { kind: 'invalid', id, error: RpcError.invalidRequest('a response carries result or error, not both') }
    const error = value.error
    if ('error' in value && !(isObject(error) && Number.isInteger(error.code) && typeof error.message === 'string')) {
      return { kind: 'invalid', id, error: RpcError.invalidRequest('"error" must be {code, message}') }
    }
    return 'error' in value
      ? { kind: 'response', id, error: error as never }
      : { kind: 'response', id, result: value.result }
  }
  return {
    kind: 'invalid',
    id,
    error: RpcError.invalidRequest('a message needs "method", or "result"/"error" with "id"'),
  }
}

/** Parse one line of text into a classified message (-32700 on bad JSON). */
export function parseLine(text: string): Incoming {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return { kind: 'invalid', id: null, error: RpcError.parseError((e as Error).message) }
  }
  return classify(value)
}
