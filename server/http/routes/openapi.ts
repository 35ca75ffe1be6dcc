/** `GET /openapi.json`: the bundled, self-contained OpenAPI document this server implements. */
import document from '../../../generated/http/openapi.bundle.json' with { type: 'json' }
import type { OperationHandlers } from '../app.ts'

export function openapiHandlers(): OperationHandlers {
  const text = JSON.stringify(document)
  return {
    'openapi.get': () => new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }),
  }
}

