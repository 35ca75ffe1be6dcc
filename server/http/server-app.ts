/** Assembles the HTTP app with every operation handler this build implements. */
import type { Logger } from '../log.ts'
import { createHttpApp } from './app.ts'
import type { GuardOptions } from './guard.ts'
import { healthHandlers } from './routes/health.ts'
import { openapiHandlers } from './routes/openapi.ts'

export interface HttpServerDeps {
  version: string
  startedAt: Date
  logger: Logger
  masterToken?: string
  guard?: GuardOptions
}

export function createHttpServerApp(deps: HttpServerDeps) {
  return createHttpApp({
    logger: deps.logger,
    masterToken: deps.masterToken,
    guard: deps.guard,
    handlers: { ...healthHandlers(deps), ...openapiHandlers() },
  })
}
