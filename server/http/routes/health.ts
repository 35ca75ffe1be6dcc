/** `GET /health` and `GET /healthz`: liveness, open even when a token is set. */
import type { z } from 'zod'
import type { HealthGetResponse200Schema } from '../../../generated/http/routes.gen.ts'
import type { OperationHandlers } from '../app.ts'
import { jsonResponse } from '../errors.ts'

export function healthHandlers(info: {
  version: string
  startedAt: Date
}): Pick<OperationHandlers, 'health.get' | 'healthz.get'> {
  // The answer never changes while the process runs: built once.
  const body: z.input<typeof HealthGetResponse200Schema> = {
    status: 'ok',
    version: info.version,
    started_at: info.startedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  }
  return {
    'health.get': () => jsonResponse(200, body),
    'healthz.get': () => jsonResponse(200, body),
  }
}
