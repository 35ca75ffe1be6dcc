// Pattern figures : the ReDoS regex `(a+)+$` on a line of 40 `a` and `!` (Grep) and
// the glob `*a*a*a*a*a*a*a*a*a*a*a*a*c` against a 200-`a` file name (Glob). The baseline is the
// engine the tools used before, measured in the same run: a JavaScript RegExp (in a child
// process, killed after BENCH_LIMIT_MS, with the growth per extra `a` measured on shorter lines
// to estimate the full one). "After" is the tool itself. Prints figures, asserts nothing.
// Run: node_modules/.bin/tsx bench/tool-patterns.ts
import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { globTool } from '../server/tools/glob.ts'
import { grepTool } from '../server/tools/grep.ts'
import { recordingContext } from '../server/tools/fixtures/workspace.ts'

const LIMIT_MS = Number(process.env.BENCH_LIMIT_MS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 9)
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

/** Time `regex.test(subject)` in a child process; undefined when it did not finish in `limit`. */
function jsRegexMs(source: string, subject: string, limit = LIMIT_MS): number | undefined {
  const code = `const re=new RegExp(${JSON.stringify(source)});const s=${JSON.stringify(subject)};const t=process.hrtime.bigint();re.test(s);process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`
  const r = spawnSync(process.execPath, ['-e', code], { timeout: limit, encoding: 'utf8' })
  return r.status === 0 ? Number(r.stdout) : undefined
}

async function timeTool(run: () => Promise<unknown>): Promise<number> {
  const xs: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint()
    await run()
    xs.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  return median(xs)
}

const fmt = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(2)} ms`)

const ws = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-bench-patterns-')))
try {
  // Grep: the old engine is JavaScript's backtracking RegExp, line by line.
  const line = `${'a'.repeat(40)}!`
  const short = [18, 20, 22].map((n) => jsRegexMs('(a+)+$', `${'a'.repeat(n)}!`) ?? NaN)
  const growth = Math.sqrt((short[2] as number) / (short[1] as number))
  const estimate = (short[2] as number) * growth ** (40 - 22)
  const grepBefore = jsRegexMs('(a+)+$', line)
  writeFileSync(join(ws, 'redos.txt'), `${line}\n`)
  const grepAfter = await timeTool(() =>
    grepTool.run({ pattern: '(a+)+$', case_insensitive: false, max_results: 200 }, recordingContext(ws)),
  )

  // Glob: the old matcher compiled the glob to one JavaScript RegExp over the whole path.
  const glob = '*a*a*a*a*a*a*a*a*a*a*a*a*c'
  const oldGlobRe = `^(?:${glob.replace(/\*/g, '[^/]*')})$`
  const name = 'a'.repeat(200)
  const globBefore = jsRegexMs(oldGlobRe, name)
  const globShort = [20, 25, 30].map((n) => jsRegexMs(oldGlobRe, 'a'.repeat(n)) ?? NaN)
  writeFileSync(join(ws, name), '')
  const globAfter = await timeTool(() => globTool.run({ pattern: glob, max_results: 1000 }, recordingContext(ws)))
  const capped = await timeTool(() => globTool.run({ pattern: '*a*a*c', max_results: 1000 }, recordingContext(ws)))
  const cappedName = 'a'.repeat(255)
  writeFileSync(join(ws, cappedName), '')
  const cappedLong = await timeTool(() => globTool.run({ pattern: '*a*a*c', max_results: 1000 }, recordingContext(ws)))

  const out = [
    `Grep (a+)+$ on one line of 40 "a" and "!":`,
    `  before (JavaScript RegExp): ${grepBefore === undefined ? `did not finish in ${fmt(LIMIT_MS)} (killed)` : fmt(grepBefore)}; 18/20/22 "a": ${short.map(fmt).join(' / ')} (x${growth.toFixed(2)} per "a", about ${fmt(estimate)} estimated for 40)`,
    `  after  (Grep tool, ripgrep out of process): ${fmt(grepAfter)} median of ${RUNS}`,
    `  ratio before/after: ${grepBefore === undefined ? `> ${Math.round(LIMIT_MS / grepAfter)}x (estimate ${Math.round(estimate / grepAfter).toExponential(1)}x)` : `${(grepBefore / grepAfter).toFixed(0)}x`}`,
    `Glob ${glob} against a 200-"a" file name:`,
    `  before (one JavaScript RegExp): ${globBefore === undefined ? `did not finish in ${fmt(LIMIT_MS)} (killed)` : fmt(globBefore)}; 20/25/30 "a": ${globShort.map(fmt).join(' / ')}`,
    `  after  (Glob tool): ${fmt(globAfter)} median of ${RUNS} — rejected at once: more than 3 "*" in a segment`,
    `  the worst pattern still allowed, *a*a*c, on names of 200 and 255 "a": ${fmt(capped)} / ${fmt(cappedLong)} (whole Glob call)`,
    `  ratio before/after: ${globBefore === undefined ? `> ${Math.round(LIMIT_MS / globAfter)}x` : `${(globBefore / globAfter).toFixed(0)}x`}`,
  ]
  process.stdout.write(`${out.join('\n')}\n`)
} finally {
  rmSync(ws, { recursive: true, force: true })
}
