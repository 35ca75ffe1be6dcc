/**
 * The ACP network arms against the official SDK's own server transport (the fixture
 * harness/fixtures/acp-net-host.mjs: AcpServer on /acp, each connection forwarded to a stdio
 * agent): over Streamable HTTP and WebSocket the arm initializes, round-trips requests with their
 * ids, learns the agent's name, sniffs both directions, sends the bearer token, reports a refused
 * connection in the SDK's words, and leaves nothing open.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kitRoot } from '../../kit/paths.ts'
import { AcpSniffer } from '../sniffer.ts'
import { AcpNetArm, endpointFor, type AcpNetTransport } from './acp-net.ts'

const fixtures = join(kitRoot(), 'conformance', 'harness', 'fixtures')
let host: ChildProcess
let url = ''

beforeAll(async () => {
  // The agent behind the SDK's server: answers each request with {protocolVersion: 1}.
  host = spawn(
    process.execPath,
    [
      join(fixtures, 'acp-net-host.mjs'),
      '--port',
      '0',
      '--token',
      'arm-token',
      '--',
      process.execPath,
      join(fixtures, 'echo-agent.mjs'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  url = await new Promise<string>((resolve, reject) => {
    let err = ''
    host.stderr!.on('data', (d: Buffer) => {
      err += d.toString('utf8')
      const m = /acp-net-host: (\S+)/.exec(err)
      if (m) resolve(m[1]!)
    })
    host.once('exit', (code) => reject(new Error(`the fixture exited (${code}): ${err}`)))
  })
})

afterAll(async () => {
  if (host.exitCode !== null) return
  const exited = new Promise((r) => host.once('exit', r))
  host.kill('SIGTERM')
  await exited
})

const init = (id: number | string) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'arm-test', version: '1' } },
})

describe.each(['acp-http', 'acp-ws'] as AcpNetTransport[])('the %s arm, through the SDK transports', (transport) => {
  it('initializes, round-trips a request by its id, sniffs both ways, and closes cleanly', async () => {
    const sniffer = new AcpSniffer()
    const arm = new AcpNetArm(transport, { url, token: 'arm-token', cwd: '/tmp' }, sniffer)
    try {
      await arm.send(init(0), {})
      expect(await arm.next(10_000)).toMatchObject({ jsonrpc: '2.0', id: 0, result: { protocolVersion: 1 } })
      await arm.send({ jsonrpc: '2.0', id: 'two', method: '_kit/echo', params: {} }, {})
      expect(await arm.next(10_000)).toMatchObject({ id: 'two', result: { protocolVersion: 1 } })
      expect(arm.error).toBeUndefined()
      expect(arm.name).toBe(transport)
      expect(arm.cwd).toBe('/tmp')
    } finally {
      await arm.dispose()
    }
    // The sniffer saw the kit's initialize: it negotiated the v1 table from it.
    expect(sniffer.dialect).toBe('acp-v1')
    expect(await arm.next(10)).toBeUndefined()
  })

  it('without the bearer token the connection is refused, and the arm says so', async () => {
    const arm = new AcpNetArm(transport, { url, token: 'wrong', cwd: '/tmp' }, new AcpSniffer())
    try {
      await arm.send(init(0), {})
      expect(await arm.next(10_000)).toBeUndefined()
      expect(arm.error).toMatch(/401|Unauthorized|closed|refused|Unexpected server response/i)
      expect(arm.diagnostics().join('\n')).toMatch(/^connection: /m)
      await expect(arm.send(init(1), {})).rejects.toThrow(new RegExp(`the ${transport} connection is closed`))
    } finally {
      await arm.dispose()
    }
  })

  it('refuses raw bytes: those are the stdio stream’s', async () => {
    const arm = new AcpNetArm(transport, { url, token: 'arm-token', cwd: '/tmp' }, new AcpSniffer())
    await expect(arm.sendRaw()).rejects.toThrow(/raw bytes are stdio's/)
    await arm.dispose()
  })
})

describe('endpointFor', () => {
  it('gives acp-ws a ws(s) URL and acp-http an http(s) one, keeping host, path and query', () => {
    expect(endpointFor('acp-ws', 'http://127.0.0.1:1/acp?x=1')).toBe('ws://127.0.0.1:1/acp?x=1')
    expect(endpointFor('acp-ws', 'https://h/acp')).toBe('wss://h/acp')
    expect(endpointFor('acp-http', 'ws://127.0.0.1:1/acp')).toBe('http://127.0.0.1:1/acp')
    expect(endpointFor('acp-http', 'https://h/acp')).toBe('https://h/acp')
  })
})
