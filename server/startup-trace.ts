/**
 * Start-up phase marks for bench/startup-profile.ts: with `CHIMERA_STARTUP_TRACE=1` each mark
 * writes `chimera-startup <phase> <epoch ms> <validator ms>` to stderr, meaning "the time since
 * the previous mark went to <phase>"; the validator figure is the time spent so far building
 * generated validators on first use (generated/lazy-schema.gen.ts), which the bench takes out
 * of the phase it fell in. Without the variable a mark does nothing.
 */
export type StartupPhase = 'bootstrap' | 'modules' | 'store' | 'session' | 'provider' | 'listen'

const on = process.env.CHIMERA_STARTUP_TRACE === '1'
// Only a traced start loads perf_hooks (the global `performance` loads it too, on first use).
const performance = on ? process.getBuiltinModule('node:perf_hooks').performance : undefined
const VALIDATOR_MS = Symbol.for('chimera.validatorBuildMs')

function write(phase: StartupPhase, epochMs: number): void {
  const v = (globalThis as { [VALIDATOR_MS]?: number })[VALIDATOR_MS] ?? 0
  process.stderr.write(`chimera-startup ${phase} ${epochMs.toFixed(3)} ${v.toFixed(3)}\n`)
}

/** Marks the end of a phase (a no-op unless CHIMERA_STARTUP_TRACE=1). */
export function startupMark(phase: StartupPhase): void {
  if (performance) write(phase, performance.timeOrigin + performance.now())
}

/** The first mark of the process: Node's own bootstrap, ended before any module of ours ran. */
export function startupBootstrapMark(): void {
  if (performance) write('bootstrap', performance.timeOrigin + performance.nodeTiming.bootstrapComplete)
}
