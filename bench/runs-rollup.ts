// The /runs/cost rollup over a generated corpus of 10,000 session directories (BENCH_SESSIONS),
// each with session.json, summary.json and 8 event files, in a temporary CHIMERA_HOME. Prints
// the rollup time against baselines measured in the same run on the same tree: `readdir` of the
// event-log root and of every session directory, and (for scale) reading every event file,
// which is what a rollup that ignored the summaries would have to do. Median of BENCH_RUNS
// runs, warm cache. Prints; asserts nothing. Run: node_modules/.bin/tsx bench/runs-rollup.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { mapLimit } from '../server/store/file-log.ts'
import { newSessionId } from '../server/store/paths.ts'
import { costRollup } from '../server/runs/rollup.ts'
import { openEventStore } from '../server/store/open.ts'

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const EVENTS = [
  'user_message',
  'turn_start',
  'step_start',
  'text_delta',
  'usage',
  'step_end',
  'turn_end',
  'agent_result',
]
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const now = (): number => Number(process.hrtime.bigint()) / 1e6

async function generate(root: string): Promise<void> {
  const agents = ['otter', 'ferret', 'mink'] as const
  const models = ['claude-sonnet-4-6', 'gpt-4o', 'glm-5.1:cloud', 'offline']
  await mkdir(root, { recursive: true })
  const t0 = Date.parse('2026-01-01T00:00:00Z')
  await mapLimit(
    Array.from({ length: SESSIONS }, (_, i) => i),
    32,
    async (i) => {
      const started = new Date(t0 + i * 60_000)
      const id = newSessionId(agents[i % 3]!, started)
      const dir = join(root, id)
      await mkdir(dir)
      const model = models[i % models.length]!
      await writeFile(
        join(dir, 'session.json'),
        JSON.stringify({
          session_id: id,
          agent: agents[i % 3],
          cwd: '/w',
          model,
          mode: 'build',
          created_at: started.toISOString(),
        }),
      )
      const input = 500 + (i % 97) * 13
      const output = 100 + (i % 31) * 7
      await writeFile(
        join(dir, 'summary.json'),
        JSON.stringify({
          session_id: id,
          started_at: started.toISOString(),
          ended_at: new Date(started.getTime() + 30_000).toISOString(),
          model,
          prompt: `task ${i}`,
          success: i % 7 !== 0,
          cost_usd: (i % 100) / 1000,
          steps: 1 + (i % 9),
          tool_calls: i % 5,
          usage: {
            input_tokens: input,
            output_tokens: output,
            cache_tokens: i % 50,
            total_tokens: input + output + (i % 50),
            cost_usd: (i % 100) / 1000,
          },
        }),
      )
      for (const [k, type] of EVENTS.entries()) {
        const seq = k + 1
        await writeFile(
          join(dir, `event-${String(seq).padStart(6, '0')}-${type}.json`),
          `${JSON.stringify({ seq, id: `evt-${i}-${seq}`, session_id: id, type, turn: 0, ts: started.toISOString(), data: { text: 'x'.repeat(120) } })}\n`,
        )
      }
    },
  )
}

async function readdirTree(root: string): Promise<number> {
  const names = await readdir(root)
  const counts = await mapLimit(names, 64, async (n) => (await readdir(join(root, n))).length)
  return counts.reduce((a, b) => a + b, 0)
}

async function readEveryEvent(root: string): Promise<number> {
  const names = await readdir(root)
  let events = 0
  await mapLimit(names, 64, async (n) => {
    const files = (await readdir(join(root, n))).filter((f) => f.startsWith('event-'))
    for (const f of files) {
      JSON.parse(await readFile(join(root, n, f), 'utf8'))
      events++
    }
  })
  return events
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = now()
  await fn()
  return now() - t
}

const home = mkdtempSync(join(tmpdir(), 'chimera-bench-runs-'))
const root = join(home, 'eventlog')
try {
  const g0 = now()
  await generate(root)
  console.log(
    `generated ${SESSIONS} session directories (${SESSIONS * (EVENTS.length + 2)} files) in ${((now() - g0) / 1000).toFixed(1)} s`,
  )
  const files = await readdirTree(root) // warm the cache once
  const store = openEventStore(home)
  const r = await costRollup(store)
  if (r.total_runs !== SESSIONS || r.skipped_dirs !== 0)
    throw new Error(`rollup saw ${r.total_runs} runs, ${r.skipped_dirs} skipped`)
  const base: number[] = []
  const rollup: number[] = []
  const events: number[] = []
  for (let i = 0; i < RUNS; i++) {
    base.push(await time(() => readdirTree(root)))
    rollup.push(await time(() => costRollup(store)))
    events.push(await time(() => readEveryEvent(root)))
  }
  const b = median(base)
  const row = (name: string, v: number) =>
    console.log(`${name.padEnd(60)} ${v.toFixed(1).padStart(8)} ms  (${(v / b).toFixed(2)}x baseline)`)
  console.log(`Node ${process.version}, ${SESSIONS} sessions, ${files} files, median of ${RUNS} runs, warm cache`)
  row('baseline: readdir of the root and every session directory', b)
  row('costRollup (summary.json of each session, totals, p50/p95)', median(rollup))
  row('for scale: reading every event file instead', median(events))
  console.log(
    `rollup: ${r.total_runs} runs, $${r.total_cost}, ${r.total_tokens} tokens, p50 $${r.totals.p50_cost_usd}, p95 $${r.totals.p95_cost_usd}`,
  )
} finally {
  rmSync(home, { recursive: true, force: true })
}
