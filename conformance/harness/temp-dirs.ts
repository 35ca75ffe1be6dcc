/** Temporary directories for a test file, all removed by one call (use it in `afterEach`). */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function tempDirs(): { make(prefix: string): string; cleanup(): void } {
  const dirs: string[] = []
  return {
    make(prefix) {
      const d = mkdtempSync(join(tmpdir(), prefix))
      dirs.push(d)
      return d
    },
    cleanup() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
    },
  }
}
