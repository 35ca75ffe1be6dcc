/**
 * The conformance kit's own rules: the requirement corpus (every entry has a stable id, a
 * section and transports; ids are unique), `--only` globs, expected-failures files, the
 * reports (console, JUnit XML, JSON) and exit codes, and the CLI's list / usage errors.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ID_PATTERN, TRANSPORTS, globToRegExp, isAcpNet, matchesAny, type TransportId } from './corpus/ids.ts'
import { notApplicable } from './run/applicable.ts'
import { loadCorpus, parseCorpusFile } from './corpus/load.ts'
import { parseScenario } from './corpus/scenario.ts'
import { corpusDirs } from './paths.ts'
import { execute } from './cli/execute.ts'
import { expectedFor, listProblems, loadExpectedFailures } from './run/expected.ts'
import { VIOLATION_RULES } from './run/violations.ts'
import type { Result } from './run/runner.ts'
import { resultLine, summaryText } from './report/console.ts'
import { junitReport } from './report/junit.ts'
import { corpusVersion, jsonReport } from './report/json.ts'
import { htmlReport } from './report/html.ts'
import { exitCodeOf } from './report/summary.ts'
import { UsageError } from '../../server/cli/args.ts'

const tmp = mkdtempSync(join(tmpdir(), 'kit-test-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('the requirement corpus', () => {
  const corpus = loadCorpus(corpusDirs())
  it('loads every transcript and scenario with an explicit, well-formed, unique id, a section and transports', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(48)
    for (const e of corpus) {
      expect(e.explicitId, e.file).toBe(true)
      expect(e.id, e.file).toMatch(ID_PATTERN)
      expect(e.section, e.file).not.toBe('')
      expect(e.transports.length, e.file).toBeGreaterThan(0)
      for (const t of e.transports) expect(TRANSPORTS).toContain(t)
    }
    expect(new Set(corpus.map((e) => e.id)).size).toBe(corpus.length)
  })
  it('binds one abstract scenario to several transports (cancel mid-turn on all seven)', () => {
    const cancel = corpus.find((e) => e.id === 'core.cancel.mid-turn')!
    expect(cancel.body.kind).toBe('scenario')
    expect([...cancel.transports].sort()).toEqual([...TRANSPORTS].sort())
  })
  it('binds every ACP v1 requirement to acp-http and acp-ws too, and nothing else to them', () => {
    const v1 = corpus.filter((e) => e.transports.includes('acp-v1'))
    expect(v1.length).toBeGreaterThan(90)
    for (const e of corpus)
      for (const t of ['acp-http', 'acp-ws'] as const)
        expect(e.transports.includes(t), `${e.id} ${t}`).toBe(e.transports.includes('acp-v1'))
  })
  it('marks stdio-only checks not applicable to ACP over the network, with the reason; the rest apply', () => {
    const byId = new Map(corpus.map((e) => [e.id, e]))
    const na = (id: string, t: TransportId) => notApplicable(byId.get(id)!, t)
    expect(na('acp.framing.bom', 'acp-http')).toMatch(/^not applicable to acp-http: it sends raw bytes/)
    expect(na('acp.stdio.exit-on-end-of-input', 'acp-ws')).toMatch(/closes the agent's stdin/)
    expect(na('acp.v1.initialize.zed', 'acp-ws')).toMatch(/initializes twice on one stream/)
    // A transcript's tail checking another requirement (exit on end of input) does not make it stdio-only.
    expect(na('acp.jsonrpc.method-not-found', 'acp-http')).toBeUndefined()
    expect(na('acp.v1.session.methods', 'acp-ws')).toBeUndefined()
    expect(na('core.cancel.mid-turn', 'acp-http')).toBeUndefined()
    // Nothing is ever not applicable on stdio.
    for (const e of corpus) for (const t of e.transports) if (!isAcpNet(t)) expect(notApplicable(e, t)).toBeUndefined()
  })
  it('asks an HTTP transcript target for a master token exactly when the transcript has one', () => {
    expect(corpus.find((e) => e.id === 'http.auth.master-token')!.config.auth).toBe('token')
    expect(corpus.find((e) => e.id === 'http.errors.bad-requests')!.config.auth).toBe('none')
    expect(corpus.find((e) => e.id === 'rpc.prompt.queue')!.config.auth).toBeUndefined()
  })
  it('refuses a duplicate id, naming both files', () => {
    const dir = mkdtempSync(join(tmp, 'dup-'))
    const s = '{"scenario":1,"id":"core.x.y","title":"t","section":"s","transports":["rpc"]}\n{"prompt":"hi"}\n'
    writeFileSync(join(dir, 'a.jsonl'), s)
    writeFileSync(join(dir, 'b.jsonl'), s)
    expect(() => loadCorpus([dir])).toThrow(/core\.x\.y is used twice: .*a\.jsonl and .*b\.jsonl/)
  })
  it('reports a bad scenario step with its file and line', () => {
    expect(() =>
      parseScenario(
        '{"scenario":1,"id":"core.a.b","title":"t","section":"s","transports":["rpc"]}\n\n{"prompt":"x"}\n{"expectTxt":"y"}\n',
        'f.jsonl',
      ),
    ).toThrow(/^f\.jsonl:4: bad step/)
    expect(() =>
      parseScenario('{"scenario":1,"id":"Core.A","title":"t","section":"s","transports":["rpc"]}\n', 'f.jsonl'),
    ).toThrow(/f\.jsonl:1: bad scenario header: id/)
    expect(() =>
      parseCorpusFile(
        '{"scenario":1,"id":"core.a.b","title":"t","section":"s","transports":["smtp"]}\n',
        'g.jsonl',
        tmp,
      ),
    ).toThrow(/g\.jsonl:1: bad scenario header: transports/)
  })
})

describe('--only globs', () => {
  it('* stays within a word run, ** crosses dots, a trailing .* also matches deeper ids', () => {
    expect(globToRegExp('core.*').test('core.cancel')).toBe(true)
    expect(globToRegExp('core.*').test('core.cancel.idle')).toBe(false)
    expect(globToRegExp('core.**').test('core.cancel.idle')).toBe(true)
    expect(matchesAny('core.cancel.idle', ['core.*'])).toBe(true)
    expect(matchesAny('rpc.prompt.queue', ['core.*', 'http.**'])).toBe(false)
    expect(matchesAny('anything.at.all', [])).toBe(true)
    expect(globToRegExp('a.b').test('aXb')).toBe(false)
  })
})

const result = (over: Partial<Result>): Result => ({
  id: 'core.prompt.text',
  title: 'A <title> & "quotes"',
  section: 's',
  level: 'MUST',
  surface: 'core',
  transport: 'rpc',
  file: 'f.jsonl',
  status: 'pass',
  durationMs: 12,
  violations: [],
  ...over,
})

describe('expected failures', () => {
  it('loads JSON and YAML lists, matches exact ids per transport, and refuses a malformed file, a glob or a bad pattern', () => {
    const j = join(tmp, 'x.json')
    writeFileSync(
      j,
      JSON.stringify({
        failures: [{ id: 'core.cancel.idle', transport: 'http', failure: 'expected', reason: 'routes not merged' }],
      }),
    )
    const y = join(tmp, 'x.yaml')
    writeFileSync(y, 'failures:\n  - id: rpc.prompt.queue\n    failure: nothing arrived\n    reason: known\n')
    const list = [...loadExpectedFailures(j), ...loadExpectedFailures(y)]
    const at = (id: string, transport: 'http' | 'rpc') => expectedFor(list, { id, transport, violations: [] })
    expect(at('core.cancel.idle', 'http')?.reason).toBe('routes not merged')
    expect(at('core.cancel.idle', 'rpc')).toBeUndefined()
    expect(at('rpc.prompt.queue', 'rpc')?.reason).toBe('known')
    const bad = join(tmp, 'bad.json')
    writeFileSync(bad, JSON.stringify({ failures: [{ id: 'x.y', failure: 'f' }] }))
    expect(() => loadExpectedFailures(bad)).toThrow(/not an expected-failures file: failures\.0\.reason/)
    writeFileSync(bad, JSON.stringify({ failures: [{ id: 'core.**', failure: 'f', reason: 'r' }] }))
    expect(() => loadExpectedFailures(bad)).toThrow(/failures\.0\.id: a requirement id or violation rule/)
    writeFileSync(bad, JSON.stringify({ failures: [{ id: 'x.y', reason: 'r' }] }))
    expect(() => loadExpectedFailures(bad)).toThrow(/failures\.0\.failure/)
    writeFileSync(bad, JSON.stringify({ failures: [{ id: 'x.y', failure: '(', reason: 'r' }] }))
    expect(() => loadExpectedFailures(bad)).toThrow(/failures\.0\.failure: a regular expression/)
  })
  it('every shipped expected-failures list loads, and each entry names a requirement of the corpus on its transport (no list problems)', () => {
    const all = loadCorpus(corpusDirs())
    const known = new Map(all.map((e) => [e.id, e.transports]))
    const profiles = join(corpusDirs()[0]!, '..', 'profiles')
    const names = readdirSync(profiles)
      .filter((f) => f.endsWith('.expected-failures.json'))
      .map((f) => f.replace('.expected-failures.json', ''))
    expect(names).toEqual(
      expect.arrayContaining(['chimera', 'claude-agent-acp', 'claude-code-acp', 'codex-acp', 'gemini-cli', 'opencode']),
    )
    for (const name of names) {
      const list = loadExpectedFailures(join(profiles, `${name}.expected-failures.json`))
      expect(list.length).toBeGreaterThan(0)
      expect(listProblems(list, known, VIOLATION_RULES, []).map((p) => `${name}: ${p.entry.id}: ${p.problem}`)).toEqual(
        [],
      )
    }
  })
  it('exit code by level: MUST failures fail the run, SHOULD/MAY only with --fail-on; violations are MUST; stale and list problems always', () => {
    expect(exitCodeOf([result({}), result({ status: 'skip' }), result({ status: 'xfail' })])).toBe(0)
    expect(exitCodeOf([result({}), result({ status: 'fail' })])).toBe(1)
    expect(exitCodeOf([result({ status: 'stale', level: 'MAY' })])).toBe(1)
    const should = result({ status: 'fail', level: 'SHOULD' })
    const may = result({ status: 'fail', level: 'MAY' })
    expect(exitCodeOf([should, may])).toBe(0)
    expect(exitCodeOf([should], 'SHOULD')).toBe(1)
    expect(exitCodeOf([may], 'SHOULD')).toBe(0)
    expect(exitCodeOf([may], 'MAY')).toBe(1)
    expect(
      exitCodeOf([
        result({
          status: 'fail',
          level: 'SHOULD',
          violations: [{ rule: 'acp.v1.wire.schema', dir: 'out', frame: '{}', problem: 'p', spec: 's' }],
        }),
      ]),
    ).toBe(1)
    expect(exitCodeOf([result({})], 'MUST', 1)).toBe(1)
  })
})

describe('reports', () => {
  const violation = {
    rule: 'rpc.stdout.protocol-only',
    dir: 'out' as const,
    frame: '[info] hello',
    problem: 'stdout carried a line that is not JSON',
    spec: 'specs/asyncapi/rpc.asyncapi.yaml',
  }
  const results = [
    result({}),
    result({
      id: 'core.tool.read',
      status: 'fail',
      message: 'expected text "a", got "b"',
      line: 4,
      violations: [violation],
    }),
    result({ id: 'core.cancel.idle', status: 'xfail', expectedReason: 'not merged' }),
    result({ id: 'core.tool.run', status: 'stale', expectedReason: 'old', message: 'passes' }),
    result({ id: 'rpc.x.y', surface: 'rpc', status: 'skip', message: 'needs offline-model' }),
  ]
  it('console: one line per result, failure details with the rule and spec, a summary ending in the plain counts', () => {
    const lines = results.map((r) => resultLine(r)).join('\n')
    expect(lines).toContain('PASS  core.prompt.text [rpc]')
    expect(lines).toContain('FAIL  core.tool.read [rpc]')
    expect(lines).toContain('f.jsonl:4: expected text "a", got "b"')
    expect(lines).toContain(
      'violation rpc.stdout.protocol-only: received [info] hello — stdout carried a line that is not JSON (specs/asyncapi/rpc.asyncapi.yaml)',
    )
    const summary = summaryText(results)
    expect(summary).toContain('core [rpc]               1 passed, 2 failed, 1 expected failure(s)')
    expect(summary.split('\n').at(-1)).toBe('1 passed, 2 failed, 1 skipped')
  })
  it('console: an expected failure shows its frames only with --verbose; a SHOULD failure says it does not fail the run', () => {
    const x = result({
      id: 'core.cancel.idle',
      status: 'xfail',
      expectedReason: 'not merged',
      message: 'line 3: nothing arrived',
      transcript: ['>> {"id":1}', '<< {"id":1,"result":{}}'],
    })
    expect(resultLine(x)).not.toContain('<< {"id":1')
    expect(resultLine(x, true)).toContain('expected: not merged')
    expect(resultLine(x, true)).toContain('        << {"id":1,"result":{}}')
    expect(resultLine(result({ status: 'fail', level: 'SHOULD', message: 'm' }))).toMatch(
      /^FAIL {2}.* — SHOULD: reported, does not fail the run \(--fail-on should to make it\)/,
    )
    expect(summaryText([result({ status: 'fail', level: 'SHOULD' })])).toContain(
      '1 failure(s) below MUST (SHOULD/MAY): reported, not failing the run',
    )
  })
  it('JUnit XML: a suite per transport, failures and skips counted, expected failures apart from skips, text escaped', () => {
    const xml = junitReport(results)
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="chimera-conformance">/)
    expect(xml).toContain('<testsuite name="chimera-conformance rpc" tests="5" failures="2" errors="0" skipped="1"')
    expect(xml).toContain(
      '<testcase name="core.tool.read" classname="core.rpc" file="f.jsonl" time="0.012"><properties><property name="chimera.level" value="MUST"/><property name="chimera.status" value="fail"/></properties><failure message="expected text &quot;a&quot;, got &quot;b&quot;" type="fail">',
    )
    expect(xml).toMatch(
      /<testcase name="core.cancel.idle" [^>]*><properties>.*<property name="chimera.status" value="xfail"\/><property name="chimera.expected-reason" value="not merged"\/><\/properties><system-out>expected failure: not merged/,
    )
    expect(xml).not.toMatch(/<skipped message="expected failure/)
    expect(xml).not.toMatch(/<title>|& "/)
    const soft = junitReport([result({ status: 'fail', level: 'SHOULD', message: 'm' })])
    expect(soft).toContain('failures="0"')
    expect(soft).toContain('<property name="chimera.fails-run" value="false"/>')
  })
  const run = {
    profile: 'p',
    transports: ['rpc'],
    corpus: { hash: 'abc', requirements: 1, bindings: 1 },
    startedAt: new Date(0),
    failOn: 'MUST' as const,
    listProblems: [],
  }
  it('JSON: lossless results with the kit, corpus and implementation versions and the counts', () => {
    const r = JSON.parse(
      jsonReport([...results, result({ id: 'core.x.y', agent: { name: 'chimera-otter', version: '0.1.0' } })], run),
    )
    expect(r.kit).toEqual({ name: 'chimera-conformance', version: expect.stringMatching(/^\d+\.\d+\.\d+/), format: 2 })
    expect(r.corpus).toEqual({ hash: 'abc', requirements: 1, bindings: 1 })
    expect(r.target.implementations).toEqual({ rpc: ['chimera-otter 0.1.0'] })
    expect(r.summary).toEqual({
      pass: 2,
      fail: 1,
      xfail: 1,
      stale: 1,
      skip: 1,
      na: 0,
      total: 6,
      failBelowBar: 0,
      listProblems: 0,
    })
    expect(Object.keys(r.byTransport)).toEqual(['rpc'])
    expect(r.byTransport.rpc).toMatchObject({ pass: 2, fail: 1, total: 6 })
    expect(r.results[1].violations[0].rule).toBe('rpc.stdout.protocol-only')
    expect(r.startedAt).toBe('1970-01-01T00:00:00.000Z')
  })
  it('ACP over the network: a not-applicable result is its own count per transport, in every report', () => {
    const acp = [
      result({ id: 'acp.framing.bom', surface: 'acp', transport: 'acp-v1' }),
      result({
        id: 'acp.framing.bom',
        surface: 'acp',
        transport: 'acp-http',
        status: 'na',
        message: 'not applicable to acp-http: it sends raw bytes',
      }),
      result({ id: 'core.prompt.text', transport: 'acp-http' }),
      result({ id: 'core.prompt.text', transport: 'acp-ws', status: 'fail', message: 'm' }),
      result({ id: 'acp.framing.bom', surface: 'acp', transport: 'acp-ws', status: 'na', message: 'n/a: raw' }),
    ]
    expect(resultLine(acp[1]!)).toMatch(/^N\/A {3}acp\.framing\.bom \[acp-http\] .*\n {6}not applicable to acp-http/)
    const summary = summaryText(acp)
    expect(summary).toContain(
      '  [acp-v1]                 1 passed, 0 failed, 0 expected failure(s), 0 not applicable, 0 skipped',
    )
    expect(summary).toContain(
      '  [acp-http]               1 passed, 0 failed, 0 expected failure(s), 1 not applicable, 0 skipped',
    )
    expect(summary).toContain(
      '  [acp-ws]                 0 passed, 1 failed, 0 expected failure(s), 1 not applicable, 0 skipped',
    )
    expect(summary).toContain('2 not applicable')
    expect(summary.split('\n').at(-1)).toBe('2 passed, 1 failed, 0 skipped')
    expect(exitCodeOf([acp[1]!])).toBe(0)
    const xml = junitReport(acp)
    expect(xml).toContain(
      '<testsuite name="chimera-conformance acp-http" tests="2" failures="0" errors="0" skipped="1"',
    )
    expect(xml).toContain(
      '<property name="chimera.status" value="na"/></properties><skipped message="not applicable to acp-http',
    )
    const r = JSON.parse(jsonReport(acp, { ...run, transports: ['acp-v1', 'acp-http', 'acp-ws'] }))
    expect(Object.keys(r.byTransport)).toEqual(['acp-v1', 'acp-http', 'acp-ws'])
    expect(r.byTransport['acp-http']).toMatchObject({ pass: 1, na: 1, fail: 0, total: 2 })
    expect(r.byTransport['acp-ws']).toMatchObject({ pass: 0, na: 1, fail: 1, total: 2 })
    expect(r.summary.na).toBe(2)
    expect(htmlReport(r)).toContain('2 not applicable')
  })
  it('the corpus version is a content hash: stable, and different when a requirement changes', () => {
    const corpus = loadCorpus(corpusDirs())
    const v = corpusVersion(corpus)
    expect(v.hash).toMatch(/^[0-9a-f]{16}$/)
    expect(corpusVersion([...corpus].reverse()).hash).toBe(v.hash)
    expect(
      corpusVersion(corpus.map((e, i) => (i === 0 ? { ...e, level: e.level === 'MUST' ? 'SHOULD' : 'MUST' } : e))).hash,
    ).not.toBe(v.hash)
  })
  it('HTML: one row per requirement with a verdict per transport, a failure with its frames, everything escaped', () => {
    const hostile = result({
      id: 'core.tool.read',
      title: '<script>alert(1)</script>',
      status: 'fail',
      message: 'got "<img src=x onerror=alert(1)>"',
      transcript: ['<< {"a":"</pre><b>"}'],
    })
    const html = htmlReport(
      JSON.parse(
        jsonReport(
          [
            result({}),
            hostile,
            result({
              id: 'core.tool.read',
              transport: 'http',
              surface: 'core',
              status: 'xfail',
              expectedReason: 'r & d',
              message: 'm',
            }),
          ],
          run,
        ),
      ),
    )
    expect(html).toMatch(/^<!doctype html>/)
    expect(html).not.toMatch(/<script|<img|<\/pre><b>/)
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html).toContain('<th>http</th><th>rpc</th>')
    expect(html).toContain('<td class="v FAIL"')
    expect(html).toContain('<td class="v xfail"')
    expect(html).toContain('&lt;&lt; {&quot;a&quot;:&quot;&lt;/pre&gt;&lt;b&gt;&quot;}')
    expect(html).toContain('http: expected failure — listed: r &amp; d')
    expect(html).not.toMatch(/<(img|script|a|link|iframe)\b/i)
  })
})

describe('the CLI (in process)', () => {
  const run = async (flags: Record<string, unknown>, raw: string[] = []) => {
    const out: string[] = []
    const code = await execute(flags, raw, (l) => out.push(l))
    return { code, out: out.join('\n') }
  }
  it('--list prints every requirement with its transports and the totals', async () => {
    const { code, out } = await run({ list: true })
    expect(code).toBe(0)
    expect(out).toMatch(
      /^core\.cancel\.mid-turn {2}\[acp-v1,acp-http,acp-ws,acp-otter,acp-ferret,http,rpc\] {2}MUST {2}Cancel mid-turn/m,
    )
    expect(out).toMatch(/^\d+ requirement\(s\), \d+ bindings$/m)
    expect(out).toMatch(/^surface +requirements +acp-v1 +acp-http +acp-ws +acp-otter +acp-ferret +http +rpc$/m)
    expect(out).toMatch(/^total +\d+( +\d+){7}$/m)
    // Only the network wires have bindings that cannot apply (stdio-only checks).
    expect(out).toMatch(/^n\/a +0 +[1-9]\d* +[1-9]\d* +0 +0 +0 +0$/m)
  })
  it('--only narrows the list', async () => {
    const { out } = await run({ list: true }, ['--only', 'rpc.eof.*'])
    expect(
      out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('rpc.eof.')),
    ).toHaveLength(3)
  })
  it('an --only that selects nothing is a usage error', async () => {
    await expect(run({ list: true }, ['--only', 'core.no-such.*'])).rejects.toThrow(
      /--only core\.no-such\.\*: no requirement matches/,
    )
    await expect(run({ profile: 'chimera' }, ['--only', 'nope.nope'])).rejects.toThrow(UsageError)
  })
  it('usage errors: nothing to test, a bad URL, --token without --http, an unknown profile or transport', async () => {
    await expect(run({})).rejects.toThrow(UsageError)
    await expect(run({ http: 'ftp://x' })).rejects.toThrow(/--http must be an http\(s\) URL/)
    await expect(run({ rpc: 'x', token: 't' })).rejects.toThrow(/--token goes with --http, --acp-http or --acp-ws/)
    await expect(run({ 'acp-http': 'ws://h/acp' })).rejects.toThrow(/--acp-http must be an http\(s\) URL/)
    await expect(run({ 'acp-ws': 'ftp://h/acp' })).rejects.toThrow(/--acp-ws must be a ws\(s\) URL/)
    await expect(run({ 'acp-ws': 'not a url' })).rejects.toThrow(/--acp-ws must be a URL/)
    await expect(run({ profile: 'no-such-profile' })).rejects.toThrow(/no shipped profile of that name/)
    await expect(run({ profile: 'chimera', transport: 'smtp' })).rejects.toThrow(/--transport: unknown smtp/)
    await expect(run({ rpc: 'x', timeout: '-1' })).rejects.toThrow(/--timeout must be a positive integer/)
    await expect(run({ rpc: 'x', ports: '9000-8000' })).rejects.toThrow(/--ports must be FROM-TO/)
    await expect(run({ command: 'mutnats' })).rejects.toThrow(/unknown command "mutnats"/)
  })
})
