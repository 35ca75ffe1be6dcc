/**
 * The kit proves itself end to end: the CLI runs the shipped Chimera profile on the JSON-lines
 * RPC (spawning dist/, the model double through the OpenAI-compatible provider) with reports,
 * an expected-failures list turns a pass into a stale failure, and every mutant under
 * conformance/mutants/ is failed on its named requirement (for the stated reason) while the same
 * requirements pass against the unbroken target.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadCorpus } from './corpus/load.ts'
import { corpusDirs, kitRoot } from './paths.ts'
import { loadProfile } from './profiles/profile.ts'
import { loadMutants, mutantTable, runControl, runMutant, type MutantOutcome } from './run/mutants.ts'

const tmp = mkdtempSync(join(tmpdir(), 'kit-self-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))
const bin = join(kitRoot(), 'bin', 'chimera-conformance.mjs')
const kit = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1' },
  })

describe('chimera-conformance against Chimera over the JSON-lines RPC', () => {
  it('passes the core scenarios, prints a line each and the summary, writes JUnit and JSON, exits 0', () => {
    const json = join(tmp, 'r.json')
    const junit = join(tmp, 'r.xml')
    const r = kit([
      '--profile',
      'chimera',
      '--transport',
      'rpc',
      '--only',
      'core.prompt.*,core.tool.read,core.cancel.mid-turn',
      '--json',
      json,
      '--junit',
      junit,
    ])
    expect(r.stderr).toBe('')
    expect(r.status, r.stdout).toBe(0)
    expect(r.stdout).toMatch(/^PASS {2}core\.cancel\.mid-turn \[rpc\] /m)
    expect(r.stdout.trim().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed, 0 skipped$/)
    const report = JSON.parse(readFileSync(json, 'utf8'))
    expect(report.summary.fail).toBe(0)
    expect(report.summary.pass).toBeGreaterThanOrEqual(4)
    expect(report.results.every((x: { transport: string }) => x.transport === 'rpc')).toBe(true)
    expect(readFileSync(junit, 'utf8')).toMatch(/<testsuite name="chimera-conformance rpc" tests="\d+" failures="0"/)
  }, 120_000)
  it('an expected failure that passes fails the run as stale, an entry naming nothing is a list problem (exit 1); a usage error exits 2', () => {
    const list = join(tmp, 'x.json')
    writeFileSync(
      list,
      JSON.stringify({
        failures: [
          { id: 'core.prompt.text', failure: 'expected text', reason: 'was broken once' },
          { id: 'core.no-such.requirement', failure: 'x', reason: 'a typo' },
        ],
      }),
    )
    const r = kit([
      '--profile',
      'chimera',
      '--transport',
      'rpc',
      '--only',
      'core.prompt.text',
      '--expected-failures',
      list,
    ])
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^STALE core\.prompt\.text \[rpc\]/m)
    expect(r.stdout).toContain('1 stale expected failure(s)')
    expect(r.stdout).toMatch(
      /^LIST {2}core\.no-such\.requirement: no requirement or rule core\.no-such\.requirement in the corpus/m,
    )
    const none = kit(['--profile', 'chimera', '--only', 'core.no-such.*'])
    expect(none.status).toBe(2)
    expect(none.stderr).toMatch(/no requirement matches/)
    const u = kit(['--rpc', 'x', '--token', 't'])
    expect(u.status).toBe(2)
    expect(u.stderr).toMatch(/--token goes with --http/)
  }, 60_000)
})

describe('mutants: the kit fails each deliberately broken server on the right requirement', () => {
  const entries = loadCorpus(corpusDirs())
  const base = loadProfile(join(kitRoot(), 'conformance', 'profiles', 'chimera.json'))
  const mutants = loadMutants()
  const outcomes: MutantOutcome[] = []
  for (const m of mutants) {
    it(`${m.name}: ${m.breaks} → fails ${m.killedBy}`, async () => {
      // The control: the same requirements pass against the unbroken target, so the kill means something.
      const ctl = await runControl(m, entries, base)
      expect(ctl.length).toBeGreaterThan(0)
      expect(
        ctl.filter((r) => r.status !== 'pass').map((r) => `${r.id} [${r.transport}] ${r.status}: ${r.message}`),
      ).toEqual([])
      const o = await runMutant(m, entries, base)
      o.controlFailures = []
      outcomes.push(o)
      expect(o.killed, `caught by: ${o.caughtBy.join(', ')}; ${o.results.map((r) => r.message).join(' | ')}`).toBe(true)
    }, 90_000)
  }
  it('prints the mutant table and the mutation score', () => {
    const table = mutantTable(outcomes)
    process.stderr.write(`\n${table}\n`)
    expect(table).toContain(`mutation score: ${mutants.length}/${mutants.length} killed`)
  })
})
