/**
 * The kit's self-test: each mutant (conformance/mutants/mutants.json) wraps the real
 * implementation in a proxy that breaks one rule; the kit runs the mutant's requirements
 * against it and must fail it on the named requirement id (a failing scenario id, or the rule
 * of a contract violation). The same requirements against the unbroken target must pass, or a
 * "kill" would prove nothing. Prints the mutation score.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as z from 'zod'
import { TRANSPORTS, matchesAny, type TransportId } from '../corpus/ids.ts'
import type { CorpusEntry } from '../corpus/load.ts'
import { mutantsDir } from '../paths.ts'
import { resolveProfile, type ResolvedProfile } from '../profiles/profile.ts'
import { runCorpus, type Result, type RunOptions } from './runner.ts'

/** How the mutant runs wait and where their ports come from (the kit's flags). */
export type MutantRunOptions = Pick<RunOptions, 'timeoutMs' | 'startupGraceMs' | 'ports'>

const Manifest = z
  .object({
    mutants: z.array(
      z
        .object({
          name: z.string().regex(/^[a-z0-9-]+$/),
          breaks: z.string().min(1),
          transport: z.enum(TRANSPORTS),
          only: z.array(z.string()).min(1),
          killedBy: z.string().min(1),
          /** The failure message must match this (the kill is for the right reason, not a crash). */
          because: z.string().min(1),
          /**
           * A mutant that is its own implementation (a mini agent with `--fault`): its command, and
           * the control's (the same program unbroken). Without it, the mutant wraps the profile's
           * command for `transport` (`<name>.mjs <real command…>`) and the control is the profile.
           */
          command: z.array(z.string()).min(1).optional(),
          control: z.array(z.string()).min(1).optional(),
        })
        .strict(),
    ),
  })
  .strict()
export type Mutant = z.infer<typeof Manifest>['mutants'][number]

export function loadMutants(dir = mutantsDir()): Mutant[] {
  return Manifest.parse(JSON.parse(readFileSync(join(dir, 'mutants.json'), 'utf8'))).mutants
}

/** The profile with `transport`'s command run through the mutant wrapper. */
/** A small target's profile: its command, and for HTTP a master token it takes as `--auth-token` when a requirement needs one. */
function standalone(
  base: ResolvedProfile,
  name: string,
  transport: Mutant['transport'],
  command: string[],
): ResolvedProfile {
  const http = transport === 'http'
  const config = http
    ? {
        ...base.profile.config,
        'auth=token': { args: ['--auth-token', '${token}'], env: {}, files: {} },
        'auth=none': { args: [], env: {}, files: {} },
      }
    : base.profile.config
  const target = { env: {}, files: {}, ready: '/health', command, ...(http ? { token: 'kit-mini-token' } : {}) }
  return resolveProfile(
    { ...base.profile, name, targets: { [transport]: target }, config, expectedFailures: undefined },
    base.dir,
  )
}

export function mutate(base: ResolvedProfile, m: Mutant, dir = mutantsDir()): ResolvedProfile {
  const launch = base.profile.targets[m.transport]
  if (m.command) return standalone(base, m.name, m.transport, m.command)
  if (!launch?.command) throw new Error(`mutant ${m.name}: the profile has no ${m.transport} command to wrap`)
  const targets = { [m.transport]: { ...launch, command: ['${node}', join(dir, `${m.name}.mjs`), ...launch.command] } }
  return resolveProfile(
    { ...base.profile, name: `${base.profile.name}+${m.name}`, targets, expectedFailures: undefined },
    base.dir,
  )
}

/** The unbroken target the mutant is compared with. */
export function control(base: ResolvedProfile, m: Mutant): ResolvedProfile {
  if (!m.control) return resolveProfile({ ...base.profile, expectedFailures: undefined }, base.dir)
  return standalone(base, `${m.name} control`, m.transport, m.control)
}

export interface MutantOutcome {
  mutant: Mutant
  killed: boolean
  /** The control's results failing (it must pass everything), when the control was run. */
  controlFailures?: string[]
  /** Requirement ids and violation rules that failed. */
  caughtBy: string[]
  results: Result[]
}

const failedIds = (rs: readonly Result[]): string[] => [
  ...new Set(rs.filter((r) => r.status === 'fail').flatMap((r) => [r.id, ...r.violations.map((v) => v.rule)])),
]

/** The mutant's requirements against the unbroken target: every one must pass. */
export async function runControl(
  m: Mutant,
  entries: readonly CorpusEntry[],
  base: ResolvedProfile,
  o: MutantRunOptions = {},
): Promise<Result[]> {
  return runCorpus({
    ...o,
    entries: entries.filter((e) => matchesAny(e.id, m.only)),
    profile: control(base, m),
    transports: [m.transport as TransportId],
  })
}

export async function runMutant(
  m: Mutant,
  entries: readonly CorpusEntry[],
  base: ResolvedProfile,
  o: MutantRunOptions = {},
): Promise<MutantOutcome> {
  const selected = entries.filter((e) => matchesAny(e.id, m.only))
  const results = await runCorpus({
    ...o,
    entries: selected,
    profile: mutate(base, m),
    transports: [m.transport as TransportId],
  })
  const caughtBy = failedIds(results)
  const because = new RegExp(m.because)
  const right = results.some(
    (r) =>
      r.status === 'fail' &&
      (r.id === m.killedBy || r.violations.some((v) => v.rule === m.killedBy)) &&
      because.test([r.message ?? '', ...r.violations.map((v) => v.problem)].join('\n')),
  )
  return { mutant: m, killed: right, caughtBy, results }
}

export function mutantTable(outcomes: readonly MutantOutcome[]): string {
  const control = (o: MutantOutcome): string =>
    o.controlFailures === undefined
      ? 'not run'
      : o.controlFailures.length
        ? `FAILED: ${o.controlFailures.join('; ')}`
        : 'passes'
  const rows = outcomes.map(
    (o) =>
      `| ${o.mutant.name} | ${o.mutant.breaks} | ${o.mutant.transport} | ${control(o)} | ${o.killed ? `killed by \`${o.mutant.killedBy}\`` : `SURVIVED (failed: ${o.caughtBy.join(', ') || 'nothing'})`} |`,
  )
  const killed = outcomes.filter((o) => o.killed).length
  return [
    '| mutant | breaks | transport | control | result |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `mutation score: ${killed}/${outcomes.length} killed`,
  ].join('\n')
}
