// Runs the vitest suite once per Node binary given on the command line, shows each run's
// closing line prefixed with its Node version, then prints the combined closing line
// `N passed, N failed` that CI reads. Exits non-zero if any run failed or printed no summary,
// or if the runs changed the checkout (`git status --porcelain` differs before and after; tests
// write only into temporary directories; outside a git checkout this check is skipped).
import { spawn } from 'node:child_process'
import { execFileSync } from 'node:child_process'

const gitStatus = () => {
  try {
    return execFileSync('git', ['status', '--porcelain=v1', '--untracked-files=all'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
  } catch {
    return undefined
  }
}

const binaries = process.argv.slice(2)
if (!binaries.length) {
  console.error('usage: node scripts/test-matrix.mjs <node-binary>...')
  process.exit(2)
}
let passed = 0
let failed = 0
let skipped = 0
let bad = false
const lines = []
const statusBefore = gitStatus()
for (const bin of binaries) {
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()
  process.stdout.write(`\n=== vitest on Node ${version} ===\n`)
  const child = spawn(bin, ['node_modules/vitest/vitest.mjs', 'run'], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => {
    process.stdout.write(d)
    out += d.toString()
  })
  const code = await new Promise((resolve) => child.on('close', resolve))
  const m = [...out.matchAll(/^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/gm)].pop()
  if (!m) {
    bad = true
    failed += 1
    lines.push(`node${version.slice(1).split('.')[0]}: no summary line (exit ${code})`)
    continue
  }
  passed += Number(m[1])
  failed += Number(m[2])
  skipped += Number(m[3] ?? 0)
  if (code !== 0) bad = true
  lines.push(`node${version.slice(1).split('.')[0]}: ${m[0]}`)
}
const statusAfter = gitStatus()
if (statusBefore !== undefined && statusAfter !== statusBefore) {
  bad = true
  lines.push(
    `the test runs changed the checkout:\n  before: ${statusBefore.trim() || '(clean)'}\n  after:  ${(statusAfter ?? '').trim() || '(clean)'}`,
  )
}
process.stdout.write(
  `\n${lines.join('\n')}\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
)
process.exit(bad || failed ? 1 : 0)
