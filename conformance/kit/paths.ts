/**
 * Where the kit's own files are: the corpus, the profiles and the mutants live beside the code
 * in the repository, and the bundled bin (dist/chimera-conformance.mjs) finds them from its
 * own location, so a third party runs it from a checkout without our server.
 */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let root: string | undefined

/** The repository root: the nearest ancestor of this module holding conformance/scenarios. */
export function kitRoot(): string {
  if (root) return root
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'conformance', 'scenarios'))) return (root = dir)
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  throw new Error('conformance kit: cannot find conformance/scenarios above the kit; run it from a Chimera checkout')
}

export const corpusDirs = (): string[] => [join(kitRoot(), 'conformance', 'transcripts'), join(kitRoot(), 'conformance', 'scenarios')]
export const profilesDir = (): string => join(kitRoot(), 'conformance', 'profiles')
export const mutantsDir = (): string => join(kitRoot(), 'conformance', 'mutants')
