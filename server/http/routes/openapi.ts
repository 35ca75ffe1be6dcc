/**
 * The contracts this server implements, as self-contained JSON: `GET /openapi.json` (REST),
 * `GET /asyncapi.json` (the SSE streams) and `GET /openrpc.json` (the ACP surface of the same
 * process: `?dialect=v1`, the default, or `seed`). Each document (385 KB together) is loaded on
 * its first request, not when the server starts.
 */
import type { OperationHandlers } from '../app.ts'

/** A handler answering the JSON document `load` imports, loaded and serialised once, on first use. */
function lazyJson(load: () => Promise<{ default: unknown }>): () => Promise<Response> {
  let text: Promise<string> | undefined
  return async () =>
    new Response(await (text ??= load().then((m) => JSON.stringify(m.default))), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    })
}

export function openapiHandlers(): Pick<OperationHandlers, 'openapi.get' | 'asyncapi.get' | 'openrpc.get'> {
  const v1 = lazyJson(() => import('../../../generated/acp/openrpc-v1.bundle.json', { with: { type: 'json' } }))
  const seed = lazyJson(() => import('../../../generated/acp/openrpc-seed.bundle.json', { with: { type: 'json' } }))
  return {
    'openapi.get': lazyJson(() => import('../../../generated/http/openapi.bundle.json', { with: { type: 'json' } })),
    'asyncapi.get': lazyJson(() => import('../../../generated/sse/asyncapi.bundle.json', { with: { type: 'json' } })),
    'openrpc.get': ({ query }) => (query.dialect === 'seed' ? seed() : v1()),
  }
}
