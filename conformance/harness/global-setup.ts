/**
 * Builds the CLI bundle once before the suite, so stdio tests run what users run, and checks
 * that the suite left the checkout as it found it: tests work in temporary directories, so a
 * file the run created, changed or removed in the checkout fails the run (outside a git
 * checkout there is nothing to compare and the check is skipped).
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { checkoutState, describeChanges } from './checkout-state.ts'

export default function setup(): () => void {
  const root = fileURLToPath(new URL('../..', import.meta.url))
  const before = checkoutState(root)
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' })
  // The build writes dist/ (ignored); the baseline is taken after it.
  const baseline = checkoutState(root) ?? before
  return () => {
    if (baseline === undefined) return
    const after = checkoutState(root)
    const changed = describeChanges(baseline, after ?? '')
    if (!changed) return
    // A teardown's exception is only logged by vitest: report it and fail the run's exit code.
    process.stderr.write(
      `\nthe test run changed the checkout (tests must write only into temporary directories):\n${changed}\n`,
    )
    process.exitCode = 1
  }
}
