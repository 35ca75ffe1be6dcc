/**
 * `chimera-conformance mutants`: the kit's proof that it catches faults, runnable by anyone.
 * Each mutant of conformance/mutants/mutants.json (`--only` narrows them by name) runs its
 * requirements against the unbroken control (everything must pass) and against the mutant (it
 * must fail the named requirement for the stated reason); prints a line per mutant, the table
 * and the mutation score; exits 0 only when every control passed and every mutant was killed.
 */
import { UsageError } from '../../../server/cli/args.ts'
import { matchesAny } from '../corpus/ids.ts'
import { loadCorpus } from '../corpus/load.ts'
import { corpusDirs } from '../paths.ts'
import { loadProfile } from '../profiles/profile.ts'
import {
  loadMutants,
  mutantTable,
  runControl,
  runMutant,
  type MutantOutcome,
  type MutantRunOptions,
} from '../run/mutants.ts'

export interface MutantsCommand extends MutantRunOptions {
  /** The profile whose commands the proxy mutants wrap (Chimera's by default). */
  profile: string
  /** Mutant names (globs), from --only. */
  only: string[]
  out: (line: string) => void
}

export async function runMutants(c: MutantsCommand): Promise<number> {
  const names = c.only.flatMap((g) =>
    g
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  const mutants = loadMutants().filter((m) => matchesAny(m.name, names))
  if (!mutants.length)
    throw new UsageError(
      `--only ${names.join(',')}: no mutant matches (names: ${loadMutants()
        .map((m) => m.name)
        .join(', ')})`,
    )
  const entries = loadCorpus(corpusDirs())
  const base = loadProfile(c.profile)
  const outcomes: MutantOutcome[] = []
  for (const m of mutants) {
    const ctl = await runControl(m, entries, base, c)
    const o = await runMutant(m, entries, base, c)
    o.controlFailures = ctl
      .filter((r) => r.status !== 'pass')
      .map((r) => `${r.id} [${r.transport}] ${r.status}: ${r.message ?? ''}`.slice(0, 300))
    if (!ctl.length) o.controlFailures.push('the control ran no requirement')
    outcomes.push(o)
    c.out(
      `${o.killed && !o.controlFailures.length ? 'KILLED  ' : 'SURVIVED'} ${m.name} [${m.transport}] ${m.breaks}${o.controlFailures.length ? ` (control failed: ${o.controlFailures.join('; ')})` : ''}`,
    )
  }
  c.out('')
  c.out(mutantTable(outcomes))
  return outcomes.every((o) => o.killed && !o.controlFailures?.length) ? 0 : 1
}
