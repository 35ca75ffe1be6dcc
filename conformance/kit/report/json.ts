/** The JSON report: lossless, one record per requirement and transport, with the run's target and counts. */
import type { Result } from '../run/runner.ts'
import { counts } from './summary.ts'

export interface JsonReport {
  kit: { name: 'chimera-conformance'; format: 1 }
  target: { profile: string; transports: string[] }
  startedAt: string
  summary: ReturnType<typeof counts>
  results: Result[]
}

export function jsonReport(results: readonly Result[], target: JsonReport['target'], startedAt: Date): string {
  const report: JsonReport = { kit: { name: 'chimera-conformance', format: 1 }, target, startedAt: startedAt.toISOString(), summary: counts(results), results: [...results] }
  return `${JSON.stringify(report, null, 2)}\n`
}
