/**
 * The bundled CLI as users run it: help and version on stdout, usage errors on stderr with exit
 * code 2 and nothing on stdout (stdout is the wire on the stdio transports).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'

function run(args: string[]) {
  const home = mkdtempSync(join(tmpdir(), 'cli-home-'))
  try {
    const r = spawnSync(process.execPath, [CLI_BUNDLE, ...args], { input: '', encoding: 'utf8', env: { ...process.env, CHIMERA_HOME: home }, timeout: 20_000 })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

describe('chimera CLI', () => {
  it('--help lists the commands on stdout and exits 0', () => {
    const r = run(['--help'])
    expect(r.code).toBe(0)
    for (const c of ['otter', 'ferret', 'code']) expect(r.stdout).toContain(c)
  })

  it('--version prints the package version', () => {
    const r = run(['--version'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
  })

  const usage: [string, string[], RegExp][] = [
    ['an unknown model', ['code', '--mode', 'rpc', '--model', 'nope'], /unknown model "nope"; available: offline/],
    ['an unknown tool in --allowed-tools', ['code', '--mode', 'rpc', '--allowed-tools', 'Read,Nope'], /unknown tool\(s\) Nope/],
    ['a --cwd that is not a directory', ['code', '--mode', 'rpc', '--cwd', '/nonexistent/dir'], /is not a directory/],
    ['a bad --permission rule', ['code', '--mode', 'rpc', '--permission', 'Bash=maybe'], /Tool=allow\|ask\|deny/],
    ['a bad --approval', ['code', '--mode', 'rpc', '--approval', 'maybe'], /approval/],
    ['--mode other than rpc', ['code', '--mode', 'tui'], /mode/],
    ['--tls-cert without --tls-key', ['otter', 'serve', '--tls-cert', 'x.pem'], /--tls-cert and --tls-key must be given together/],
    ['a non-loopback bind without a token', ['otter', 'serve', '--host', '0.0.0.0'], /refusing to bind 0\.0\.0\.0 without a bearer token/],
  ]
  for (const [what, args, message] of usage) {
    it(`${what} is a usage error: exit 2, the reason on stderr, nothing on stdout`, () => {
      const r = run(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(message)
      expect(r.stdout).toBe('')
    })
  }
})
