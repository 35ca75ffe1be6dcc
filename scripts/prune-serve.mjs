// The serving install's last step (`make install` / `make serve` without the full toolchain),
// after the build: node_modules keeps only what the built `chimera` loads at run time, and loses
// the build tools and the libraries that dist/ now holds (docs/decisions/0425-build-then-prune.md).
//
// Kept: the run-time dependencies and the optional peers of the server package (server/package.json:
// ripgrep, the language servers), with whatever they depend on in turn, and the workspace links
// (`npx chimera`). `make build` installs the build tools again when the sources change.
//
//   node scripts/prune-serve.mjs [--dry-run]   prints what it keeps and how much it removed
import { existsSync, lstatSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const modules = join(root, 'node_modules')
const dryRun = process.argv.includes('--dry-run')

const manifest = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))

/** Where `name` resolves from package directory `from`, as Node looks it up (nearest node_modules). */
function resolvePackage(name, from) {
  for (let dir = from; dir.startsWith(root); dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dir === root) break
  }
  return undefined
}

/** The package directories the server package reaches at run time. */
function runTimeClosure() {
  const server = manifest(join(root, 'server'))
  const keep = new Set()
  const visit = (name, from, required) => {
    const dir = resolvePackage(name, from)
    if (!dir) {
      if (required) throw new Error(`${name} is not installed (needed at run time); run \`make install\` again`)
      return
    }
    if (keep.has(dir)) return
    keep.add(dir)
    const m = manifest(dir)
    for (const dep of Object.keys(m.dependencies ?? {})) visit(dep, dir, true)
    // Optional dependencies are the ones npm installed for this platform (ripgrep's binary).
    for (const dep of Object.keys(m.optionalDependencies ?? {})) visit(dep, dir, false)
    for (const dep of Object.keys(m.peerDependencies ?? {})) visit(dep, dir, false)
  }
  for (const dep of Object.keys(server.dependencies ?? {})) visit(dep, join(root, 'server'), true)
  // The language servers: optional peers, kept when installed (the LSP tools find them here).
  for (const dep of Object.keys(server.peerDependencies ?? {})) visit(dep, join(root, 'server'), false)
  return keep
}

/** Bytes on disk (as `du` counts them). */
function size(path) {
  const st = lstatSync(path)
  let total = st.blocks * 512
  if (!st.isDirectory()) return total
  for (const entry of readdirSync(path)) total += size(join(path, entry))
  return total
}

/** The top-level entries of node_modules (`name` or `@scope/name`). */
function topLevel() {
  const out = []
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue
    if (entry.startsWith('@')) for (const sub of readdirSync(join(modules, entry))) out.push(join(entry, sub))
    else out.push(entry)
  }
  return out
}

if (!existsSync(modules)) throw new Error('node_modules is missing: nothing to prune')
const keep = runTimeClosure()
const kept = []
let removed = 0
let removedBytes = 0
for (const name of topLevel()) {
  const path = join(modules, name)
  // A workspace's link (node_modules/@chimera-agent/cli -> ../../server) stays: `npx chimera`.
  if (lstatSync(path).isSymbolicLink() && !relative(root, realpathSync(path)).startsWith('node_modules' + sep)) {
    kept.push(name)
    continue
  }
  if (keep.has(path)) {
    kept.push(name)
    continue
  }
  removed++
  removedBytes += size(path)
  if (!dryRun) rmSync(path, { recursive: true, force: true })
}
if (!dryRun) {
  for (const scope of readdirSync(modules).filter((e) => e.startsWith('@')))
    if (!readdirSync(join(modules, scope)).length) rmSync(join(modules, scope), { recursive: true })
  // The commands of removed packages, and npm's record of the tree it installed (now stale).
  const bin = join(modules, '.bin')
  if (existsSync(bin))
    for (const link of readdirSync(bin)) {
      const path = join(bin, link)
      try {
        statSync(path)
      } catch {
        rmSync(path, { force: true })
      }
    }
  rmSync(join(modules, '.package-lock.json'), { force: true })
}
const mb = (n) => (n / 2 ** 20).toFixed(1) // MiB, as `du -m` counts
process.stdout.write(
  `${dryRun ? 'would remove' : 'removed'} ${removed} packages (${mb(removedBytes)} MB) the build needed; ` +
    `node_modules keeps ${kept.join(', ')} (${mb(size(modules) - (dryRun ? removedBytes : 0))} MB)\n`,
)
