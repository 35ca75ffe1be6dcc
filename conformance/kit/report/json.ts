/**
 * The JSON report: lossless, one record per requirement and transport, with the kit's version,
 * the corpus's (a content hash: two runs with the same hash ran the same requirements), the
 * target's (the profile, transports and the name/version each implementation's handshake gave),
 * the counts, and the problems of the expected-failures list.
 */
import { createHash } from 'node:crypto'
import type { CorpusEntry } from '../corpus/load.ts'
import type { Level } from '../corpus/ids.ts'
import type { ListProblem } from '../run/expected.ts'
import type { Result } from '../run/runner.ts'
import { VERSION } from '../../../server/version.ts'
import { counts, countsByTransport } from './summary.ts'

export interface CorpusVersion {
  /** sha256 (first 16 hex digits) of every requirement's id and parsed content, in id order. */
  hash: string
  requirements: number
  bindings: number
}

export function corpusVersion(entries: readonly CorpusEntry[]): CorpusVersion {
  const h = createHash('sha256')
  for (const e of [...entries].sort((a, b) => a.id.localeCompare(b.id)))
    h.update(
      JSON.stringify([
        e.id,
        e.level,
        e.transports,
        e.body.kind === 'scenario'
          ? e.body.scenario
          : { header: e.body.transcript.header, steps: e.body.transcript.steps },
      ]),
    )
  return {
    hash: h.digest('hex').slice(0, 16),
    requirements: entries.length,
    bindings: entries.reduce((a, e) => a + e.transports.length, 0),
  }
}

export interface RunInfo {
  profile: string
  transports: string[]
  corpus: CorpusVersion
  startedAt: Date
  failOn: Level
  listProblems: readonly ListProblem[]
}

export interface JsonReport {
  kit: { name: 'chimera-conformance'; version: string; format: 2 }
  corpus: CorpusVersion
  target: { profile: string; transports: string[]; implementations: Record<string, string[]> }
  startedAt: string
  failOn: Level
  summary: ReturnType<typeof counts> & { listProblems: number }
  /** The same counts per transport (`acp-v1`, `acp-http`, `acp-ws`, …). */
  byTransport: Record<string, ReturnType<typeof counts>>
  listProblems: { id: string; transport?: string; problem: string; reason: string }[]
  results: Result[]
}

/** Per transport, the distinct `name version` the implementations announced. */
export function implementations(results: readonly Result[]): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const r of results) {
    if (!r.agent) continue
    const v = `${r.agent.name}${r.agent.version ? ` ${r.agent.version}` : ''}`
    const list = (out[r.transport] ??= [])
    if (!list.includes(v)) list.push(v)
  }
  return out
}

export function jsonReport(results: readonly Result[], run: RunInfo): string {
  const report: JsonReport = {
    kit: { name: 'chimera-conformance', version: VERSION, format: 2 },
    corpus: run.corpus,
    target: { profile: run.profile, transports: run.transports, implementations: implementations(results) },
    startedAt: run.startedAt.toISOString(),
    failOn: run.failOn,
    summary: { ...counts(results, run.failOn), listProblems: run.listProblems.length },
    byTransport: countsByTransport(results, run.failOn),
    listProblems: run.listProblems.map((p) => ({
      id: p.entry.id,
      transport: p.entry.transport,
      problem: p.problem,
      reason: p.entry.reason,
    })),
    results: [...results],
  }
  return `${JSON.stringify(report, null, 2)}\n`
}
