// Declarations of the client SDK's package entries (`chimera/client`, `/node`, `/msw`) into
// dist/types/, for the `types` conditions of package.json `exports`. tsc keeps the sources'
// `.ts` import suffixes, which a consumer's compiler would not resolve: they are rewritten to
// `.js` (which resolves to the `.d.ts` beside it), and the hand-off declaration file the
// generator writes (generated/http/openapi.gen.d.ts) is copied, since tsc emits none for it.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const out = join(root, 'dist/types')
rmSync(out, { recursive: true, force: true })
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.client-types.json')], { stdio: 'inherit' })
const copy = 'generated/http/openapi.gen.d.ts'
mkdirSync(dirname(join(out, copy)), { recursive: true })
copyFileSync(join(root, copy), join(out, copy))

const walk = (dir) => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]))
let files = 0
for (const file of walk(out).filter((f) => f.endsWith('.d.ts'))) {
  const text = readFileSync(file, 'utf8')
  const fixed = text.replace(/((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+?)(?:\.d)?\.ts(['"])/g, '$1$2.js$3')
  if (fixed !== text) writeFileSync(file, fixed)
  files++
}
process.stderr.write(`client declarations: ${files} files in dist/types/\n`)
