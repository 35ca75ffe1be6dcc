/**
 * Replays every recorded transcript under conformance/transcripts on each of its arms
 * (HTTP in process, HTTP over a socket, SSE over a socket, the spawned CLI on stdio).
 */
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join, relative } from 'node:path'
import { describe, it } from 'vitest'
import { armsOf, loadTranscript } from '../harness/transcript.ts'
import { replay } from '../harness/replay.ts'

const dir = fileURLToPath(new URL('../transcripts', import.meta.url))
const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl')).sort()

describe('transcripts', () => {
  it('there are transcripts for every surface', ({ expect }) => {
    const surfaces = new Set(files.map((f) => loadTranscript(join(dir, f)).header.surface))
    expect([...surfaces].sort()).toEqual(['acp', 'http', 'rpc', 'sse'])
  })
  for (const f of files) {
    const t = loadTranscript(join(dir, f))
    for (const arm of armsOf(t)) {
      it(`${relative(dir, join(dir, f))} [${arm}] ${t.header.title}`, async () => {
        await replay(t, arm)
      }, 60_000)
    }
  }
})
