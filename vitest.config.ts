import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import type { Reporter, TestModule } from 'vitest/node'

/**
 * Prints the plain closing line CI reads: `N passed, N failed` (`, N skipped` when any).
 * A test module that fails to load counts as one failure, so a broken import cannot pass.
 */
class SummaryLine implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const m of modules) {
      const tests = [...m.children.allTests()]
      for (const t of tests) {
        const s = t.result().state
        if (s === 'passed') passed++
        else if (s === 'failed') failed++
        else skipped++
      }
      if (m.state() === 'failed' && tests.length === 0) failed++
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
  }
}

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', '.tmp/**'],
    reporters: ['default', new SummaryLine()],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test files wait on child processes, sockets and disks, so one worker per core minus one
    // (vitest's default) leaves a two-core machine half idle: at least two files run at once.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    setupFiles: ['conformance/harness/test-env.ts'],
    globalSetup: ['conformance/harness/global-setup.ts'],
  },
})
