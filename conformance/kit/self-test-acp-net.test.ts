/**
 * The kit proves its ACP network transports end to end (a file of its own, so the suite runs it
 * beside the other slow kit runs): the shipped Chimera profile on stdio, Streamable HTTP and
 * WebSocket (`chimera otter serve`'s /acp, spoken through the SDK's client transports) passes
 * the same ACP v1 requirements on all three, reports a stdio-only check not applicable on the
 * network, and counts each transport apart; and an agent someone else runs is tested from just
 * its URL and bearer token (`--acp-http`, `--acp-ws`, `--token`), a wrong token failing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kitRoot } from './paths.ts'

const tmp = mkdtempSync(join(tmpdir(), 'kit-acp-net-'))
const bin = join(kitRoot(), 'bin', 'chimera-conformance.mjs')
const kit = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    timeout: 240_000,
    env: { ...process.env, NO_COLOR: '1' },
  })
let server: ChildProcess | undefined

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r))
    server.kill('SIGTERM')
    await exited
  }
  rmSync(tmp, { recursive: true, force: true })
})

interface Counts {
  pass: number
  fail: number
  xfail: number
  na: number
  skip: number
  total: number
}

describe('chimera-conformance over ACP Streamable HTTP and WebSocket', () => {
  it('the same ACP v1 requirements pass on acp-v1, acp-http and acp-ws; stdio-only checks are n/a on the network', () => {
    const json = join(tmp, 'acp.json')
    const r = kit([
      '--profile',
      'chimera',
      '--transport',
      'acp-v1,acp-http,acp-ws',
      '--only',
      'core.prompt.text,core.tool.read,core.cancel.mid-turn,core.permission.allow,acp.v1.prompt.updates-before-response,acp.jsonrpc.method-not-found,acp.framing.bom',
      '--json',
      json,
    ])
    expect(r.stderr).toBe('')
    expect(r.status, r.stdout).toBe(0)
    expect(r.stdout).toMatch(/^PASS {2}core\.cancel\.mid-turn \[acp-http\] /m)
    expect(r.stdout).toMatch(/^PASS {2}core\.permission\.allow \[acp-ws\] /m)
    expect(r.stdout).toMatch(
      /^N\/A {3}acp\.framing\.bom \[acp-ws\] .*\n {6}not applicable to acp-ws: it sends raw bytes/m,
    )
    expect(r.stdout).toMatch(
      /^ {2}\[acp-http\] +6 passed, 0 failed, 0 expected failure\(s\), 1 not applicable, 0 skipped$/m,
    )
    const report = JSON.parse(readFileSync(json, 'utf8')) as { byTransport: Record<string, Counts> }
    expect(report.byTransport['acp-v1']).toMatchObject({ pass: 7, fail: 0, na: 0, skip: 0 })
    for (const t of ['acp-http', 'acp-ws'])
      expect(report.byTransport[t], t).toMatchObject({ pass: 6, fail: 0, xfail: 0, na: 1, skip: 0, total: 7 })
  }, 240_000)

  it('an agent given by URL and token alone (--acp-http, --acp-ws, --token) is tested as it runs; a wrong token fails', async () => {
    server = spawn(
      process.execPath,
      [join(kitRoot(), 'dist', 'chimera.mjs'), 'otter', 'serve', '--port', '0', '--auth-token', 'kit-net-token'],
      { cwd: tmp, env: { ...process.env, CHIMERA_HOME: join(tmp, 'home') }, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    const base = await new Promise<string>((resolve, reject) => {
      let err = ''
      server!.stderr!.on('data', (d: Buffer) => {
        err += d.toString('utf8')
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)
        if (m) resolve(m[1]!)
      })
      server!.once('exit', (code) => reject(new Error(`otter serve exited (${code}): ${err}`)))
    })
    const only = ['--only', 'acp.jsonrpc.method-not-found,acp.jsonrpc.notification-unanswered,acp.stdio.*']
    const args = ['--acp-http', `${base}/acp`, '--acp-ws', `${base.replace('http:', 'ws:')}/acp`, ...only]
    const ok = kit([...args, '--token', 'kit-net-token'])
    expect(ok.status, ok.stdout).toBe(0)
    expect(ok.stdout).toMatch(/^PASS {2}acp\.jsonrpc\.method-not-found \[acp-http\] /m)
    expect(ok.stdout).toMatch(/^PASS {2}acp\.jsonrpc\.notification-unanswered \[acp-ws\] /m)
    expect(ok.stdout).toMatch(/^N\/A {3}acp\.stdio\.exit-on-end-of-input \[acp-http\] /m)
    expect(ok.stdout.trim().split('\n').at(-1)).toBe('4 passed, 0 failed, 0 skipped')
    const bad = kit([...args, '--token', 'not-the-token'])
    expect(bad.status).toBe(1)
    expect(bad.stdout).toMatch(
      /^FAIL {2}acp\.jsonrpc\.method-not-found \[acp-http\] .*\n.*\(the acp-http connection ended: ACP initialize failed: 401\b/m,
    )
    expect(bad.stdout).toMatch(
      /^FAIL {2}acp\.jsonrpc\.method-not-found \[acp-ws\] .*\n.*\(the acp-ws connection ended: .*401/m,
    )
  }, 240_000)
})
