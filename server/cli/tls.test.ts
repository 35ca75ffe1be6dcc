/**
 * TLS end to end: a self-signed certificate generated with `openssl` at test
 * time; `chimera otter serve --tls-cert --tls-key` announces `https://` and the bound port,
 * answers HTTPS requests and streams SSE over TLS; a cleartext client gets a connection error,
 * not an HTTP answer; one TLS flag alone or an unreadable certificate is a usage error (exit 2)
 * before anything is bound.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'

const temp = tempDirs()
const children: ChildProcess[] = []
let dir = ''
let ca = ''
beforeAll(() => {
  dir = temp.make('tls-')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  )
  ca = readFileSync(join(dir, 'cert.pem'), 'utf8')
})
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})
afterAll(() => temp.cleanup())

function launch(args: string[]): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args], {
    env: { ...process.env, CHIMERA_HOME: temp.make('tls-home-'), CHIMERA_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d))
  child.stdout!.resume()
  return { child, stderr: () => err, exit: new Promise((r) => child.on('exit', (code) => r(code))) }
}

/** An HTTPS request trusting only the test's certificate; resolves with status, headers and body text. */
function https(url: string, method = 'GET', body?: unknown): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method, ca, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (d: string) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), text }))
      },
    )
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

describe('otter serve over TLS', () => {
  it('serves HTTPS and SSE with a self-signed certificate; cleartext gets no HTTP answer', async () => {
    const s = launch([
      'otter',
      'serve',
      '--port',
      '0',
      '--tls-cert',
      join(dir, 'cert.pem'),
      '--tls-key',
      join(dir, 'key.pem'),
    ])
    const deadline = Date.now() + 10_000
    let url: string | undefined
    while (!(url = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(s.stderr())?.[1]) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20))
    expect(url, s.stderr()).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    expect(Number(new URL(url!).port)).toBeGreaterThan(0)

    const health = await https(`${url}/health`)
    expect(health.status).toBe(200)
    expect(JSON.parse(health.text)).toMatchObject({ status: 'ok' })

    const created = await https(`${url}/sessions`, 'POST', { prompt: '!say over tls' })
    expect(created.status).toBe(201)
    const id = (JSON.parse(created.text) as { session_id: string }).session_id
    // The whole stream, replay and live, until `end` closes it.
    const stream = await https(`${url}/sessions/${id}/events`)
    expect(stream.type).toMatch(/^text\/event-stream/)
    expect(stream.text).toMatch(/^retry: 1000\n/)
    expect(stream.text).toMatch(/id: 1\nevent: user_message\n/)
    expect(stream.text).toMatch(/event: agent_result\ndata: .*"output":"over tls"/)
    expect(stream.text).toMatch(/event: end\ndata: \{"session_id":"[^"]+","success":true\}\n\n$/)

    // Cleartext HTTP to the TLS port: the connection fails, no HTTP status comes back.
    const plain = await new Promise<{ status?: number; error?: string }>((resolve) => {
      const req = httpRequest(`${url!.replace('https:', 'http:')}/health`, (res) => {
        res.resume()
        resolve({ status: res.statusCode })
      })
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }))
      req.setTimeout(5000, () => req.destroy(new Error('timeout')))
      req.end()
    })
    expect(plain.status).toBeUndefined()
    expect(plain.error).toMatch(/ECONNRESET|EPIPE|HPE_|socket hang up/)

    s.child.kill('SIGTERM')
    expect(await s.exit).toBe(0)
  }, 30_000)

  it('one TLS flag alone, or a certificate that cannot be read, is a usage error before binding', async () => {
    const alone = launch(['otter', 'serve', '--port', '0', '--tls-cert', join(dir, 'cert.pem')])
    expect(await alone.exit).toBe(2)
    expect(alone.stderr()).toMatch(/^error: --tls-cert and --tls-key must be given together/m)
    expect(alone.stderr()).not.toMatch(/listening on/)
    const missing = launch([
      'otter',
      'serve',
      '--port',
      '0',
      '--tls-cert',
      join(dir, 'nope.pem'),
      '--tls-key',
      join(dir, 'key.pem'),
    ])
    expect(await missing.exit).toBe(2)
    expect(missing.stderr()).toMatch(/^error: --tls-cert: cannot read .*nope\.pem \(ENOENT\)/m)
    expect(missing.stderr()).not.toMatch(/listening on|\n\s+at /)
  }, 30_000)

  it('a certificate file of garbage, or a key of another certificate, is a usage error naming the flag', async () => {
    writeFileSync(join(dir, 'garbage.pem'), 'garbage\n')
    const garbage = launch([
      'otter',
      'serve',
      '--port',
      '0',
      '--tls-cert',
      join(dir, 'garbage.pem'),
      '--tls-key',
      join(dir, 'key.pem'),
    ])
    expect(await garbage.exit).toBe(2)
    expect(garbage.stderr()).toMatch(/^error: --tls-cert: .*garbage\.pem is not a PEM certificate/m)
    expect(garbage.stderr()).not.toMatch(/ENOENT|listening on|\n\s+at /)
    const badKey = launch([
      'otter',
      'serve',
      '--port',
      '0',
      '--tls-cert',
      join(dir, 'cert.pem'),
      '--tls-key',
      join(dir, 'garbage.pem'),
    ])
    expect(await badKey.exit).toBe(2)
    expect(badKey.stderr()).toMatch(/^error: --tls-key: .*garbage\.pem is not a usable PEM private key/m)
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'other-key.pem'),
        '-out',
        join(dir, 'other-cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=other',
      ],
      { stdio: 'ignore' },
    )
    const mismatch = launch([
      'otter',
      'serve',
      '--port',
      '0',
      '--tls-cert',
      join(dir, 'cert.pem'),
      '--tls-key',
      join(dir, 'other-key.pem'),
    ])
    expect(await mismatch.exit).toBe(2)
    expect(mismatch.stderr()).toMatch(
      /^error: --tls-key: .*other-key\.pem is not the private key of the certificate in --tls-cert .*cert\.pem/m,
    )
    expect(mismatch.stderr()).not.toMatch(/error:[0-9A-F]{8}|listening on|\n\s+at /)
  }, 30_000)
})
