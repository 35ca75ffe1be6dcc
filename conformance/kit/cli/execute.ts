/**
 * What `chimera conformance` does with its flags: pick the targets (flags, a profile, or both),
 * load and filter the corpus, list it or run it, print a line per requirement and transport
 * and a summary, write the JUnit and JSON reports, and return the exit code (0 only when
 * nothing unexpected happened; usage errors throw UsageError, exit 2).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { UsageError, parseList, repeatable } from '../../../server/cli/args.ts'
import { ACP_NET_TRANSPORTS, TRANSPORTS, matchesAny, type TransportId } from '../corpus/ids.ts'
import type { ExternalAcp } from '../run/launch.ts'
import { loadCorpus, type CorpusEntry } from '../corpus/load.ts'
import { adHocProfile, loadProfile, type ResolvedProfile } from '../profiles/profile.ts'
import { corpusDirs, profilesDir } from '../paths.ts'
import { listProblems, loadExpectedFailures, type ExpectedFailure } from '../run/expected.ts'
import { plan, runCorpus } from '../run/runner.ts'
import { notApplicable } from '../run/applicable.ts'
import { parsePortRange, type PortRange } from '../run/ports.ts'
import { VIOLATION_RULES } from '../run/violations.ts'
import { resultLine, summaryText } from '../report/console.ts'
import { corpusVersion, jsonReport } from '../report/json.ts'
import { htmlReport } from '../report/html.ts'
import { junitReport } from '../report/junit.ts'
import { exitCodeOf } from '../report/summary.ts'
import { runMutants } from './mutants-command.ts'
import type { Level } from '../corpus/ids.ts'
import { coverageText, coverage } from '../coverage/coverage.ts'

export interface KitFlags {
  command?: string
  html?: string
  'fail-on'?: string
  ports?: string
  'startup-grace'?: string
  acp?: string
  'acp-dialect'?: string
  'acp-http'?: string
  'acp-ws'?: string
  http?: string
  token?: string
  rpc?: string
  profile?: string
  transport?: string
  'model-double'?: boolean
  list?: boolean
  'expected-failures'?: string
  junit?: string
  json?: string
  coverage?: boolean
  timeout?: string
  verbose?: boolean
}

/** A shipped profile by name, or a file. */
function profilePath(p: string): string {
  if (existsSync(p)) return p
  for (const ext of ['.json', '.yaml', '.yml']) {
    const f = join(profilesDir(), `${p}${ext}`)
    if (existsSync(f)) return f
  }
  throw new UsageError(`--profile ${JSON.stringify(p)}: no such file, and no shipped profile of that name`)
}

const shell = (cmd: string): string[] => ['/bin/sh', '-c', `exec ${cmd}`]
const DOUBLE_ENV = {
  CHIMERA_CONFORMANCE_MODEL_URL: '${double.url}',
  CHIMERA_CONFORMANCE_MODEL: '${double.model}',
  CHIMERA_CONFORMANCE_MODEL_KEY: '${double.key}',
}

interface Targets {
  profile: ResolvedProfile
  transports: TransportId[]
  externalHttp?: { baseUrl: string; token?: string }
  externalAcp?: ExternalAcp
}

function targets(f: KitFlags): Targets {
  const profile = f.profile ? loadProfile(profilePath(f.profile)) : adHocProfile({})
  const given: TransportId[] = []
  const env = f['model-double'] ? DOUBLE_ENV : {}
  if (f['model-double']) profile.profile.model = { double: true, apiKey: profile.profile.model?.apiKey }
  if (f.acp !== undefined) {
    const t = `acp-${f['acp-dialect'] ?? 'v1'}` as TransportId
    profile.profile.targets[t] = {
      ...profile.profile.targets[t],
      command: shell(f.acp),
      env: { ...profile.profile.targets[t]?.env, ...env },
      files: profile.profile.targets[t]?.files ?? {},
      ready: '/health',
    }
    given.push(t)
  }
  if (f.rpc !== undefined) {
    profile.profile.targets.rpc = {
      ...profile.profile.targets.rpc,
      command: shell(f.rpc),
      env: { ...profile.profile.targets.rpc?.env, ...env },
      files: profile.profile.targets.rpc?.files ?? {},
      ready: '/health',
    }
    given.push('rpc')
  }
  let externalHttp: Targets['externalHttp']
  if (f.http !== undefined) {
    let url: URL
    try {
      url = new URL(f.http)
    } catch {
      throw new UsageError(`--http must be a URL, got ${JSON.stringify(f.http)}`)
    }
    if (!/^https?:$/.test(url.protocol))
      throw new UsageError(`--http must be an http(s) URL, got ${JSON.stringify(f.http)}`)
    delete profile.profile.targets.http
    externalHttp = { baseUrl: f.http.replace(/\/$/, ''), token: f.token }
    given.push('http')
  }
  let externalAcp: ExternalAcp | undefined
  for (const t of ACP_NET_TRANSPORTS) {
    const raw = f[t]
    if (raw === undefined) continue
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw new UsageError(`--${t} must be a URL, got ${JSON.stringify(raw)}`)
    }
    const schemes = t === 'acp-http' ? /^https?:$/ : /^(wss?|https?):$/
    if (!schemes.test(url.protocol))
      throw new UsageError(
        `--${t} must be ${t === 'acp-http' ? 'an http(s)' : 'a ws(s)'} URL, got ${JSON.stringify(raw)}`,
      )
    delete profile.profile.targets[t]
    externalAcp = { ...externalAcp, [t]: { url: url.href, token: f.token } }
    given.push(t)
  }
  if (f.token !== undefined && f.http === undefined && !externalAcp)
    throw new UsageError('--token goes with --http, --acp-http or --acp-ws')
  let transports = given.length ? given : (Object.keys(profile.profile.targets) as TransportId[])
  const only = parseList(f.transport)
  if (only) {
    const bad = only.filter((t) => !(TRANSPORTS as readonly string[]).includes(t))
    if (bad.length) throw new UsageError(`--transport: unknown ${bad.join(', ')} (known: ${TRANSPORTS.join(', ')})`)
    transports = transports.filter((t) => only.includes(t))
  }
  return { profile, transports, externalHttp, externalAcp }
}

function select(rawArgs: readonly string[]): { all: CorpusEntry[]; entries: CorpusEntry[]; globs: string[] } {
  const extra = repeatable(rawArgs, '--corpus').map((d) => resolve(d))
  for (const d of extra) if (!existsSync(d)) throw new UsageError(`--corpus ${d}: no such directory`)
  const globs = repeatable(rawArgs, '--only').flatMap((g) =>
    g
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  const all = loadCorpus([...corpusDirs(), ...extra])
  const entries = all.filter((e) => matchesAny(e.id, globs))
  // A selection that selects nothing is a mistake (a typo in an id), not a clean run.
  if (globs.length && !entries.length)
    throw new UsageError(`--only ${globs.join(',')}: no requirement matches (see --list)`)
  return { all, entries, globs }
}

/** A positive integer flag (milliseconds). */
function positiveMs(name: string, v: string | undefined, dflt: number): number {
  const n = Number(v ?? dflt)
  if (!Number.isInteger(n) || n < 0 || (name === 'timeout' && n === 0))
    throw new UsageError(
      `--${name} must be a ${name === 'timeout' ? 'positive' : 'non-negative'} integer (ms), got ${JSON.stringify(v)}`,
    )
  return n
}

/** Requirements per surface and how many bind to each transport. */
export function countTable(entries: readonly CorpusEntry[]): string {
  const surfaces = [...new Set(entries.map((e) => e.surface))].sort()
  const row = (name: string, es: readonly CorpusEntry[]) =>
    `${name.padEnd(8)} ${String(es.length).padStart(12)} ${TRANSPORTS.map((t) => String(es.filter((e) => e.transports.includes(t)).length).padStart(11)).join('')}`
  return [
    '',
    `${'surface'.padEnd(8)} ${'requirements'.padStart(12)} ${TRANSPORTS.map((t) => t.padStart(11)).join('')}`,
    ...surfaces.map((s) =>
      row(
        s,
        entries.filter((e) => e.surface === s),
      ),
    ),
    row('total', entries),
    // Bindings to ACP over the network that only stdio can check (reported n/a when run).
    `${'n/a'.padEnd(8)} ${''.padStart(12)} ${TRANSPORTS.map((t) => String(entries.filter((e) => e.transports.includes(t) && notApplicable(e, t)).length).padStart(11)).join('')}`,
  ].join('\n')
}

function write(file: string, text: string): void {
  mkdirSync(dirname(resolve(file)), { recursive: true })
  writeFileSync(file, text)
}

export async function execute(f: KitFlags, rawArgs: readonly string[], out: (line: string) => void): Promise<number> {
  if (f.command !== undefined && f.command !== 'mutants')
    throw new UsageError(`unknown command ${JSON.stringify(f.command)} (the only one is \`mutants\`)`)
  const failOn = (f['fail-on'] ?? 'must').toUpperCase() as Level
  const ports: PortRange | undefined = f.ports === undefined ? undefined : parsePortRange(f.ports)
  const timeoutMs = positiveMs('timeout', f.timeout, 10_000)
  const startupGraceMs = positiveMs('startup-grace', f['startup-grace'], 30_000)
  if (f.command === 'mutants')
    return runMutants({
      profile: f.profile ? profilePath(f.profile) : join(profilesDir(), 'chimera.json'),
      only: repeatable(rawArgs, '--only'),
      timeoutMs,
      startupGraceMs,
      ports,
      out,
    })
  const { all, entries, globs } = select(rawArgs)
  if (f.list) {
    for (const e of entries) out(`${e.id}  [${e.transports.join(',')}]  ${e.level}  ${e.title}`)
    out(countTable(entries))
    out(`${entries.length} requirement(s), ${entries.reduce((a, e) => a + e.transports.length, 0)} bindings`)
    return 0
  }
  if (f.coverage && !f.acp && !f.http && !f['acp-http'] && !f['acp-ws'] && !f.rpc && !f.profile) {
    out(coverageText(coverage(entries)))
    return 0
  }
  const t = targets(f)
  if (!t.transports.length)
    throw new UsageError('nothing to test: give --acp, --acp-http, --acp-ws, --http, --rpc or a --profile with targets')
  const expected: ExpectedFailure[] = []
  if (t.profile.profile.expectedFailures)
    expected.push(...loadExpectedFailures(resolve(t.profile.dir, t.profile.profile.expectedFailures)))
  if (f['expected-failures']) {
    if (!existsSync(f['expected-failures']))
      throw new UsageError(`--expected-failures ${f['expected-failures']}: no such file`)
    expected.push(...loadExpectedFailures(f['expected-failures']))
  }
  const planned = plan(entries, t.transports)
  out(
    `chimera-conformance: ${planned.length} check(s): ${entries.length} requirement(s)${globs.length ? ` matching ${globs.join(', ')}` : ''} on ${t.transports.join(', ')} (profile: ${t.profile.profile.name})`,
  )
  const started = new Date()
  const results = await runCorpus({
    entries,
    profile: t.profile,
    transports: t.transports,
    externalHttp: t.externalHttp,
    externalAcp: t.externalAcp,
    expected,
    timeoutMs,
    startupGraceMs,
    ports,
    onResult: (r) => out(resultLine(r, f.verbose, failOn)),
  })
  if (f.coverage) out(coverageText(coverage(entries.filter((e) => e.transports.some((x) => t.transports.includes(x))))))
  const problems = listProblems(expected, new Map(all.map((e) => [e.id, e.transports])), VIOLATION_RULES, results)
  out(summaryText(results, failOn, problems))
  const json = jsonReport(results, {
    profile: t.profile.profile.name,
    transports: t.transports,
    corpus: corpusVersion(all),
    startedAt: started,
    failOn,
    listProblems: problems,
  })
  if (f.json) write(f.json, json)
  if (f.junit) write(f.junit, junitReport(results, failOn))
  if (f.html) write(f.html, htmlReport(JSON.parse(json)))
  return exitCodeOf(results, failOn, problems.length)
}
