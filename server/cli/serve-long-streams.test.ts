/**
 * SSE streams on the real server (serveHttp, server/http/listen.ts, the Node server with its connection
 * limits) stay open as long as their turn runs: the request-body limit (30 s in production) must
 * never cut a response. Shortened here to 300 ms, a stream survives several times that, idle and
 * mid-turn, on both stream routes, and ends with its `end` record; the production server object
 * has no response or socket-idle timeout. A client that stops reading is still cut by the
 * stream's own no-read rule, with a log line.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Server } from 'node:http'
import { createLogger } from '../log.ts'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import { serveHttp, type ServeHttpOptions } from './serve-http.ts'

let env: TestEnv
let stop: AbortController
let serving: Promise<void>
const logLines: string[] = []

afterEach(async () => {
  stop?.abort()
  await serving
  await env?.cleanup()
  logLines.length = 0
})

async function start(extra: Partial<ServeHttpOptions> = {}): Promise<{ url: string; server: Server }> {
  env = testEnv('chimera-long-sse-')
  stop = new AbortController()
  const logger = createLogger({ level: 'info', sink: (l) => logLines.push(l) })
  let ready!: (v: { url: string; server: Server }) => void
  const got = new Promise<{ url: string; server: Server }>((r) => (ready = r))
  serving = serveHttp({
    agent: 'otter',
    host: '127.0.0.1',
    port: 0,
    version: 'test',
    logger,
    sessions: { manager: env.manager() },
    signal: stop.signal,
    onListening: (url, server) => ready({ url, server }),
    ...extra,
  })
  return got
}

/** Read an SSE body until `until(text)` holds or it closes; what was read and whether it closed on its own. */
async function readUntil(res: Response, until: (text: string) => boolean): Promise<{ text: string; error?: unknown }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  try {
    for (;;) {
      const r = await reader.read()
      if (r.done) return { text }
      text += r.value
      if (until(text)) {
        await reader.cancel()
        return { text }
      }
    }
  } catch (error) {
    return { text, error }
  }
}

const SHORT = { headersMs: 300, bodyMs: 300 }

describe('SSE streams and the connection limits', () => {
  it('GET /sessions/{id}/events follows a turn 5x longer than the request limit to its `end`', async () => {
    const { url } = await start({ limits: SHORT })
    const created = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: '!sleep 1500\n!say finished' }),
    })
    expect(created.status).toBe(201)
    const { session_id } = (await created.json()) as { session_id: string }
    const t0 = Date.now()
    const res = await fetch(`${url}/sessions/${session_id}/events`)
    expect(res.status).toBe(200)
    const r = await readUntil(res, (t) => t.includes('event: end'))
    expect(r.error).toBeUndefined()
    expect(Date.now() - t0).toBeGreaterThan(1000)
    expect(r.text).toContain('event: agent_result')
    expect(r.text).toMatch(/event: end\ndata: \{"session_id":"[^"]+","success":true\}/)
  })

  it('GET /session/{id}/events stays open while idle past the limit and carries the next turn', async () => {
    const { url } = await start({ limits: SHORT })
    const created = await fetch(`${url}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    const { session_id } = (await created.json()) as { session_id: string }
    const res = await fetch(`${url}/session/${session_id}/events`)
    expect(res.status).toBe(200)
    const reading = readUntil(res, (t) => t.includes('after the wait'))
    await new Promise((r) => setTimeout(r, 1200)) // 4x the limit, idle
    const sent = await fetch(`${url}/session/${session_id}/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: '!say after the wait' }),
    })
    expect(sent.status).toBe(202)
    const r = await reading
    expect(r.error).toBeUndefined()
    expect(r.text).toContain('after the wait')
  })

  it('the production server: no socket-idle timeout, Node timers only as a backstop for incomplete requests', async () => {
    const { server } = await start()
    expect(server.timeout).toBe(0)
    expect(server.headersTimeout).toBe(10_000)
    expect(server.requestTimeout).toBe(30_000)
  })

  it('a request body that never completes is still cut on time, with a log line', async () => {
    const { url } = await start({ limits: SHORT })
    const { port } = new URL(url)
    const { connect } = await import('node:net')
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    socket.write(
      'POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"prompt":',
    )
    const t0 = Date.now()
    await new Promise((r) => socket.on('close', r))
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(logLines.join('\n')).toMatch(/request body not complete within 300 ms/)
  })
})
