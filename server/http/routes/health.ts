/** `GET /health` and `GET /healthz`: liveness, open even when a token is set. */
import type { OperationHandlers } from '../app.ts'
import { jsonResponse } from '../errors.ts'
import { healthBody } from '../health-body.ts'

export function healthHandlers(info: {
  version: string
  startedAt: Date
}): Pick<OperationHandlers, 'health.get' | 'healthz.get'> {
  // The answer never changes while the process runs: built once.
  const body = healthBody(info)
  return {
    'health.get': () => jsonResponse(200, body),
    'healthz.get': () => jsonResponse(200, body),
  }
}
