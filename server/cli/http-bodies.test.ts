/**
 * Request bodies the server refuses, over a real socket to the built CLI (server/http/listen.ts in front, as
 * users run it): a chunked body past the 4 MiB limit (no length to refuse up front) gets 413 and
 * the process keeps serving — it used to die when the refused body's socket was destroyed under
 * the answer — and an upload the client abandons is a 400 for that request, not an error log.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'

const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  temp.cleanup()
})

async function serve(): Promise<{ child: ChildProcessWithoutNullStreams; port: number; err: () => string }> {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--port', '0'], {
    env: { ...process.env, CHIMERA_HOME: temp.make('http-bodies-'), CHIMERA_LOG_LEVEL: 'info' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  const deadline = Date.now() + 10_000
  for (;;) {
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err)
    if (m) return { child, port: Number(m[1]), err: () => err }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start: ${err}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Write a raw HTTP/1.1 request; the bytes received until the server closes (or `ms` passes). */
function rawRequest(port: number, write: (s: ReturnType<typeof connect>) => void, ms = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    let data = ''
    const timer = setTimeout(() => s.destroy(), ms)
    s.setEncoding('utf8').on('data', (d: string) => (data += d))
    s.on('error', () => {})
    s.on('close', () => {
      clearTimeout(timer)
      resolve(data)
    })
    s.on('connect', () => write(s))
  })
}

describe('refused request bodies keep the server alive', () => {
  it('a chunked body over the limit: 413 body_too_large, then the server still answers', async () => {
    const { child, port } = await serve()
    const chunk = Buffer.alloc(256 * 1024, 'a')
    const answer = await rawRequest(port, (s) => {
      s.write(
        'POST /session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      )
      // 5 MiB in 20 chunks, written as the socket drains; the server may stop reading first.
      let sent = 0
      const more = (): void => {
        while (sent < 20) {
          sent++
          s.write(`${chunk.length.toString(16)}\r\n`)
          s.write(chunk)
          if (!s.write('\r\n')) return void s.once('drain', more)
        }
        s.write('0\r\n\r\n')
      }
      more()
    })
    expect(answer).toMatch(/^HTTP\/1\.1 413 /)
    expect(answer).toContain('"error":"body_too_large"')
    // The process survived the refused body's socket going away, and serves the next client.
    await new Promise((r) => setTimeout(r, 300))
    expect(child.exitCode).toBeNull()
    const health = await fetch(`http://127.0.0.1:${port}/health`)
    expect(health.status).toBe(200)
  }, 30_000)

  it('an upload abandoned by its client: no crash and no "unhandled error" in the log', async () => {
    const { child, port, err } = await serve()
    for (let i = 0; i < 3; i++) {
      await rawRequest(port, (s) => {
        s.write(
          'POST /session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"pro\r\n',
        )
        setTimeout(() => s.destroy(), 50)
      })
    }
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200)
    expect(child.exitCode).toBeNull()
    expect(err()).not.toMatch(/unhandled error/)
  }, 30_000)
})
