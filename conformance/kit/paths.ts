/**
 * Where the kit's own files are: the corpus, the profiles and the mutants. In a checkout they are
 * in conformance/ (and `${kit}` in a profile is the checkout's root); in the installed kit package
 * (@chimera-agent/conformance) they are at the package's root, which its bundled bins find from
 * their own location. The `chimera conformance` command of the CLI package finds an installed kit
 * package beside itself or in the current project.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const KIT_PACKAGE = '@chimera-agent/conformance'

interface KitPlace {
  /** `${kit}` in a profile: the checkout's root, or the kit package's root. */
  root: string
  /** The directory holding transcripts/, scenarios/, profiles/ and mutants/. */
  data: string
}

let place: KitPlace | undefined

const ancestors = (from: string): string[] => {
  const out: string[] = []
  for (let dir = from; out.length < 12; dir = dirname(dir)) {
    out.push(dir)
    if (dirname(dir) === dir) break
  }
  return out
}
const isKitPackage = (dir: string): boolean =>
  existsSync(join(dir, 'scenarios')) && existsSync(join(dir, 'profiles')) && existsSync(join(dir, 'package.json'))

function installedKit(): string | undefined {
  for (const base of [import.meta.url, pathToFileURL(join(process.cwd(), 'noop.js')).href]) {
    try {
      return dirname(createRequire(base).resolve(`${KIT_PACKAGE}/package.json`))
    } catch {
      // not installed there
    }
  }
  return undefined
}

function locate(): KitPlace {
  const up = ancestors(dirname(fileURLToPath(import.meta.url)))
  const checkout = up.find((dir) => existsSync(join(dir, 'conformance', 'scenarios')))
  if (checkout) return { root: checkout, data: join(checkout, 'conformance') }
  const pkg = up.find(isKitPackage) ?? installedKit()
  if (pkg) return { root: pkg, data: pkg }
  throw new Error(
    `conformance kit: its corpus is not installed here; install the kit (npm install ${KIT_PACKAGE}) or run from a Chimera checkout`,
  )
}

/** The checkout's root, or the kit package's root (`${kit}` in a profile). */
export function kitRoot(): string {
  return (place ??= locate()).root
}

const kitData = (): string => (place ??= locate()).data
export const corpusDirs = (): string[] => [join(kitData(), 'transcripts'), join(kitData(), 'scenarios')]
export const profilesDir = (): string => join(kitData(), 'profiles')
export const mutantsDir = (): string => join(kitData(), 'mutants')
