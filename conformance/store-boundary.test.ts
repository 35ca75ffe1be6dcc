/**
 * Sessions are read only through the session manager and the store interface (docs/core.md):
 * outside server/store/, no product module imports the file store or its file-level helpers,
 * names the event-log directory (`eventlogRoot`, or the literal `eventlog` directory name) or
 * reads session files itself. Code without a manager opens the store with `openEventStore`
 * (server/store/open.ts). Tests and their fixtures may build event logs by hand; they are not
 * product modules.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const STORE = join('server', 'store')

/** Product sources under `dir` (not tests, declarations, builds or test fixtures). */
const productSources = (dir: string): string[] =>
  (readdirSync(join(root, dir), { recursive: true }) as string[])
    .filter(
      (f) =>
        /\.(ts|mjs)$/.test(f) &&
        !/\.test\.ts$|\.d\.ts$/.test(f) &&
        !/^(dist|node_modules)\//.test(f) &&
        !/(^|\/)fixtures\//.test(f),
    )
    .map((f) => join(dir, f))

/** The file-store modules: only server/store/ may import them. */
const FILE_STORE = ['file-store.ts', 'file-log.ts', 'segment.ts', 'queued-prompts.ts']

/** The source without its comments (a comment may say where sessions live). */
const code = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')

/** Why `source` (the text of `file`) goes around the store, one line per finding. */
export function storeBypasses(file: string, source: string): string[] {
  if (!relative(STORE, file).startsWith('..')) return []
  const text = code(source)
  const out: string[] = []
  for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"]([^'"]+)['"]/g)) {
    const spec = m[1]!
    if (!spec.startsWith('.')) continue
    const target = relative(root, join(root, file, '..', spec))
    if (FILE_STORE.some((f) => target === join(STORE, f))) out.push(`${file} imports ${spec}`)
  }
  if (/\beventlogRoot\b/.test(text)) out.push(`${file} names eventlogRoot`)
  if (/['"`/]eventlog['"`/]/.test(text)) out.push(`${file} names the eventlog directory`)
  if (/['"`]summary\.json['"`]|['"`]session\.json['"`]|event-\$\{|['"`]events\.jsonl['"`]/.test(text))
    out.push(`${file} names a session file`)
  return out
}

describe('sessions are read only through the manager and the store', () => {
  it('no product module outside server/store/ reads the event log or imports the file store', () => {
    const files = ['server', 'client', 'conformance'].flatMap(productSources)
    const bad = files.flatMap((f) => storeBypasses(f, readFileSync(join(root, f), 'utf8')))
    expect(bad).toEqual([])
  })

  it('the rule can fail: each way around the store is caught, the store itself is not', () => {
    const runs = join('server', 'runs', 'corpus.ts')
    expect(storeBypasses(runs, "import { mapLimit } from '../store/file-log.ts'")).toEqual([
      `${runs} imports ../store/file-log.ts`,
    ])
    expect(storeBypasses(runs, 'const d = join(eventlogRoot(home), id)')).toHaveLength(1)
    expect(storeBypasses(runs, "readFile(join(home, 'eventlog', id, 'summary.json'))")).toHaveLength(2)
    expect(storeBypasses(join('server', 'cli', 'x.ts'), "await import('../store/file-store.ts')")).toHaveLength(1)
    expect(storeBypasses(runs, "import { openEventStore } from '../store/open.ts'")).toEqual([])
    expect(storeBypasses(runs, '/** reads CHIMERA_HOME/eventlog/ through the store */')).toEqual([])
    expect(storeBypasses(join(STORE, 'open.ts'), "import { FileEventStore } from './file-store.ts'")).toEqual([])
  })
})
