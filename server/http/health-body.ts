/**
 * The liveness answer (`GET /health`, `GET /healthz` in specs/openapi: `health.get`): built in one
 * place for the app's route (routes/health.ts) and for the answer given while the app is still
 * loading (start-gate.ts), so both say the same.
 */
import type { z } from 'zod'
import type { HealthGetResponse200Schema } from '../../generated/http/routes.gen.ts'

export type HealthBody = z.input<typeof HealthGetResponse200Schema>

export function healthBody(info: { version: string; startedAt: Date }): HealthBody {
  return {
    status: 'ok',
    version: info.version,
    started_at: info.startedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  }
}
