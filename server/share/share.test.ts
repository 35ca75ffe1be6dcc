/**
 * Share sinks: `file` (private file under CHIMERA_HOME/shares), `stdout` (the body), and `http`
 * against a real loopback collector — success with a JSON reply, OTTER_SHARE_URL as the
 * default, and each upstream failure (non-2xx, redirect, connection refused, timeout) as a
 * `share_failed` (502); bad sink, format or URL as `invalid_body` (400); credentials in the URL
 * never in a message.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { renderTranscript, type SessionDetail } from './transcript.ts'
import { share } from './share.ts'
import { ChimeraError } from '../errors.ts'

const SID = 'otter-20260425T120300Z-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'
const detail: SessionDetail = {
  session_id: SID,
  summary: { session_id: SID, prompt: 'hello', model: 'offline', success: true },
  events: [
    {
      seq: 1,
      id: 'evt-1',
      session_id: SID,
      type: 'user_message',
      turn: 0,
      ts: '2026-04-25T12:03:00.000Z',
      data: { message_id: 'm', text: 'hello' },
    },
  ],
}

let home: string
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'chimera-share-'))
})
afterEach(() => rmSync(home, { recursive: true, force: true }))

interface Collector {
  url: string
  received: { method?: string; type?: string; body: string }[]
  close(): Promise<void>
}

/** A loopback collector answering with `handler`; `close()` also drops held connections. */
async function collector(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<Collector> {
  const received: Collector['received'] = []
  const sockets = new Set<Socket>()
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      received.push({ method: req.method, type: req.headers['content-type'], body })
      handler(req, res, body)
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/api/shares`,
    received,
    close: async () => {
      for (const s of sockets) s.destroy()
      server.close()
      await once(server, 'close')
    },
  }
}

async function failure(p: Promise<unknown>): Promise<ChimeraError> {
  try {
    await p
  } catch (err) {
    expect(err).toBeInstanceOf(ChimeraError)
    return err as ChimeraError
  }
  throw new Error('expected a ChimeraError')
}

describe('share sinks', () => {
  it('stdout returns the rendered body', async () => {
    expect(await share(detail, { sink: 'stdout', format: 'md' })).toEqual({
      sink: 'stdout',
      format: 'md',
      body: renderTranscript(detail, 'md').body,
    })
  })

  it('file writes a private file under CHIMERA_HOME/shares and returns its path', async () => {
    const r = await share(detail, { sink: 'file', format: 'json', env: { CHIMERA_HOME: home } })
    expect(r.path!.startsWith(join(home, 'shares', `${SID}-`))).toBe(true)
    expect(r.path!.endsWith('.json')).toBe(true)
    expect(JSON.parse(readFileSync(r.path!, 'utf8')).session_id).toBe(SID)
    expect(statSync(r.path!).mode & 0o777).toBe(0o600)
    expect(statSync(join(home, 'shares')).mode & 0o777).toBe(0o700)
    const second = await share(detail, { sink: 'file', env: { CHIMERA_HOME: home } })
    expect(second.path).not.toBe(r.path)
    expect(second.format).toBe('html')
  })

  it('http posts the rendering and returns the collector reply', async () => {
    const c = await collector((_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' })
      res.end('{"id":"share-1","url":"https://collector.example/s/1"}')
    })
    try {
      const r = await share(detail, { sink: 'http', format: 'html', url: c.url })
      expect(r).toEqual({
        sink: 'http',
        format: 'html',
        url: c.url,
        status_code: 201,
        reply: { id: 'share-1', url: 'https://collector.example/s/1' },
      })
      expect(c.received).toEqual([
        { method: 'POST', type: 'text/html; charset=utf-8', body: renderTranscript(detail, 'html').body },
      ])
      // OTTER_SHARE_URL is the default collector.
      const r2 = await share(detail, { sink: 'http', format: 'json', env: { OTTER_SHARE_URL: c.url } })
      expect(r2.status_code).toBe(201)
      expect(c.received[1]!.type).toBe('application/json')
    } finally {
      await c.close()
    }
  })

  it('a non-2xx reply or a redirect is share_failed (502) with the status', async () => {
    const c = await collector((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' })
        res.end()
        return
      }
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end('collector exploded')
    })
    try {
      const e = await failure(share(detail, { sink: 'http', url: c.url }))
      expect([e.code, e.message]).toEqual(['share_failed', `the collector at ${new URL(c.url).origin} returned 500`])
      expect(e.detail).toEqual({ status_code: 500, reply: 'collector exploded' })
      const moved = await failure(share(detail, { sink: 'http', url: c.url.replace('/api/shares', '/moved') }))
      expect(moved.message).toMatch(/returned 302$/)
    } finally {
      await c.close()
    }
  })

  it('credentials in the URL go in an authorization header, not in the result', async () => {
    let auth: string | undefined
    const c = await collector((req, res) => {
      auth = req.headers.authorization
      res.writeHead(204)
      res.end()
    })
    try {
      const r = await share(detail, { sink: 'http', url: c.url.replace('http://', 'http://user:s3cret@') })
      expect(auth).toBe(`Basic ${Buffer.from('user:s3cret').toString('base64')}`)
      expect(r).toMatchObject({ url: c.url, status_code: 204, reply: null })
    } finally {
      await c.close()
    }
  })

  it('connection refused is share_failed, naming the origin but never the credentials', async () => {
    const c = await collector(() => {})
    const url = c.url.replace('http://', 'http://user:s3cret@')
    await c.close()
    const e = await failure(share(detail, { sink: 'http', url }))
    expect(e.code).toBe('share_failed')
    expect(e.message).toMatch(/^could not reach the collector at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED$/)
    expect(e.message).not.toContain('s3cret')
  })

  it('a collector that does not answer in time is share_failed', async () => {
    const c = await collector(() => {}) // holds every request
    try {
      const e = await failure(share(detail, { sink: 'http', url: c.url, timeoutMs: 200 }))
      expect([e.code, e.message]).toEqual([
        'share_failed',
        `the collector at ${new URL(c.url).origin} did not answer within 200 ms`,
      ])
    } finally {
      await c.close()
    }
  })

  it('validation errors are invalid_share, before anything is sent', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ sink: 'email' }, /^sink must be one of file, http, stdout$/],
      [{ sink: 'stdout', format: 'pdf' }, /^format must be one of html, md, json$/],
      [{ sink: 'http', env: {} }, /needs a url \(or OTTER_SHARE_URL\)/],
      [{ sink: 'http', url: 'ftp://x/y' }, /must be http or https/],
      [{ sink: 'http', url: 'not a url' }, /not a valid absolute URL/],
      [{ sink: 'http', url: 42 }, /url must be a string/],
      [{ sink: 'file', url: 'http://x/' }, /only to the http sink/],
    ]
    for (const [opts, message] of cases) {
      const e = await failure(share(detail, opts as never))
      expect(e.code).toBe('invalid_share')
      expect(e.message).toMatch(message)
    }
  })
})
