/**
 * Replays every recorded transcript under conformance/transcripts on each of its arms
 * (HTTP in process, HTTP over a socket, SSE over a socket, the spawned CLI on stdio).
 * A requirement Chimera's expected-failures list names for every transport (no `transport`)
 * must fail here too: `it.fails`, so the entry goes stale the day it passes, as in the kit.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join, relative } from 'node:path'
import { describe, it } from 'vitest'
import { armsOf, loadTranscript } from '../harness/transcript.ts'
import { replay } from '../harness/replay.ts'

const dir = fileURLToPath(new URL('../transcripts', import.meta.url))
const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl')).sort()
const listed = JSON.parse(
  readFileSync(fileURLToPath(new URL('../profiles/chimera.expected-failures.json', import.meta.url)), 'utf8'),
) as { failures: { id: string; transport?: string }[] }
const expectedToFail = new Set(
  listed.failures.filter((f) => f.transport === undefined && !f.id.includes('*')).map((f) => f.id),
)

describe('transcripts', () => {
  it('there are transcripts for every surface', ({ expect }) => {
    const surfaces = new Set(files.map((f) => loadTranscript(join(dir, f)).header.surface))
    expect([...surfaces].sort()).toEqual(['acp', 'http', 'rpc', 'sse'])
  })
  for (const f of files) {
    const t = loadTranscript(join(dir, f))
    for (const arm of armsOf(t)) {
      const test = t.header.id && expectedToFail.has(t.header.id) ? it.fails : it
      test(`${relative(dir, join(dir, f))} [${arm}] ${t.header.title}`, async () => {
        await replay(t, arm)
      }, 60_000)
    }
  }
})
