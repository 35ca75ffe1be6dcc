/** Builds the CLI bundle once before the suite, so stdio tests run what users run. */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url))
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' })
}
