/**
 * The contracts this server implements, as self-contained JSON: `GET /openapi.json` (REST),
 * `GET /asyncapi.json` (the SSE streams) and `GET /openrpc.json` (the ACP surface of the same
 * process: `?dialect=v1`, the default, or `seed`).
 */
import openapi from '../../../generated/http/openapi.bundle.json' with { type: 'json' }
import asyncapi from '../../../generated/sse/asyncapi.bundle.json' with { type: 'json' }
import openrpcV1 from '../../../generated/acp/openrpc-v1.bundle.json' with { type: 'json' }
import openrpcSeed from '../../../generated/acp/openrpc-seed.bundle.json' with { type: 'json' }
import type { OperationHandlers } from '../app.ts'

const json = (text: string) => (): Response =>
  new Response(text, { status: 200, headers: { 'content-type': 'application/json' } })

export function openapiHandlers(): Pick<OperationHandlers, 'openapi.get' | 'asyncapi.get' | 'openrpc.get'> {
  const v1 = json(JSON.stringify(openrpcV1))
  const seed = json(JSON.stringify(openrpcSeed))
  return {
    'openapi.get': json(JSON.stringify(openapi)),
    'asyncapi.get': json(JSON.stringify(asyncapi)),
    'openrpc.get': ({ query }) => (query.dialect === 'seed' ? seed() : v1()),
  }
}
