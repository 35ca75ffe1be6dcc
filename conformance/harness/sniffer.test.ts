/**
 * Self-tests of the wire sniffers: each one flags frames that break the generated contract and
 * lets correct frames through. Payloads are the smallest valid ones the schemas allow
 * (specs/schemas/events.yaml, specs/asyncapi/*.yaml, the ACP OpenRPC documents, the OpenAPI
 * document), each then broken in exactly one place.
 */
import { describe, expect, it } from 'vitest'
import { AcpSniffer, HttpSniffer, RpcSniffer, SseSniffer, type HttpExchange, type Violation } from './sniffer.ts'

const problems = (vs: Violation[]): string[] => vs.map((v) => v.problem)

// ================================================================ ACP
const v1Init = (id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: 1 },
})
const v1InitOk = (id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] },
})
const chunk = (update: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  method: 'session/update',
  params: { sessionId: 'otter-1', update },
})

/** A sniffer that has seen a v1 `initialize` (and its answer). */
function v1(): AcpSniffer {
  const s = new AcpSniffer()
  s.frame('in', v1Init(0))
  s.frame('out', v1InitOk(0))
  return s
}

describe('AcpSniffer', () => {
  it('an initialize with protocolVersion 1 selects the v1 dialect', () => {
    const s = new AcpSniffer()
    expect(s.dialect).toBeUndefined()
    s.frame('in', v1Init())
    expect(s.dialect).toBe('acp-v1')
  })

  it('a correct v1 exchange (initialize, answer, agent_message_chunk) yields no violations', () => {
    const s = new AcpSniffer()
    s.frame('in', v1Init())
    s.frame('out', v1InitOk())
    s.frame('out', chunk({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } }))
    s.frame('in', { jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } })
    s.frame('out', { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } })
    expect(s.violations).toEqual([])
  })

  it('flags a v1 initialize result with protocolVersion "1" (a string) against InitializeResponse', () => {
    const s = new AcpSniffer()
    s.frame('in', v1Init(7))
    s.frame('out', { jsonrpc: '2.0', id: 7, result: { protocolVersion: '1' } })
    expect(s.violations).toHaveLength(1)
    expect(s.violations[0]!.dir).toBe('out')
    expect(s.violations[0]!.problem).toMatch(/^result of initialize: protocolVersion:/)
  })

  it('flags an agent→client session/update with an unknown sessionUpdate kind (tool_result) on v1', () => {
    const s = v1()
    s.frame('out', chunk({ sessionUpdate: 'tool_result', callId: 'c1', output: 'x' }))
    expect(problems(s.violations)).toHaveLength(1)
    expect(s.violations[0]!.problem).toMatch(/^params of session\/update: /)
  })

  it('flags a session/update sent client→agent (wrong direction)', () => {
    const s = v1()
    s.frame('in', chunk({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } }))
    expect(problems(s.violations)).toEqual(['session/update travels agent-to-client'])
  })

  it('flags an agent request its dialect does not define', () => {
    const s = v1()
    s.frame('out', { jsonrpc: '2.0', id: 'a1', method: 'fs/delete_everything', params: {} })
    expect(problems(s.violations)).toEqual(['agent sent fs/delete_everything, which its dialect does not define'])
  })

  it('accepts an ACP v1 extension method (a name starting with _) from the agent, and only in v1', () => {
    const s = v1()
    s.frame('out', { jsonrpc: '2.0', method: '_auth/status_update', params: { authStatus: { kind: 'api_key' } } })
    s.frame('out', { jsonrpc: '2.0', id: 'x1', method: '_vendor/ask', params: {} })
    expect(problems(s.violations)).toEqual([])
    s.frame('out', { jsonrpc: '2.0', method: 'auth/status_update', params: {} })
    expect(problems(s.violations)).toEqual(['agent sent auth/status_update, which its dialect does not define'])
  })

  it("v1: accepts any integer error code, as the official schema's ErrorCode does (401, -31999)", () => {
    const s = new AcpSniffer()
    s.frame('in', v1Init(3))
    s.frame('out', { jsonrpc: '2.0', id: 3, error: { code: -31999, message: 'nope' } })
    s.frame('in', { jsonrpc: '2.0', id: 4, method: 'session/list', params: {} })
    s.frame('out', { jsonrpc: '2.0', id: 4, error: { code: 401, message: 'Unauthorized' } })
    expect(s.violations).toEqual([])
  })

  it('v1: flags an error code that is not an integer against the schema (code 1.5)', () => {
    const s = v1()
    s.frame('in', { jsonrpc: '2.0', id: 4, method: 'session/list', params: {} })
    s.frame('out', { jsonrpc: '2.0', id: 4, error: { code: 1.5, message: 'x' } })
    expect(problems(s.violations)).toEqual(['error is not {code:int, message:string}'])
  })

  it('seed dialects: flags an error with a code the method does not declare (-31999)', () => {
    const s = new AcpSniffer()
    s.frame('in', {
      jsonrpc: '2.0',
      id: 3,
      method: 'initialize',
      params: { protocolVersion: '2025-01-01', clientCapabilities: {} },
    })
    s.frame('out', { jsonrpc: '2.0', id: 3, error: { code: -31999, message: 'nope' } })
    expect(problems(s.violations)).toEqual(['error code -31999 is not declared for initialize'])
  })

  it('accepts an error with a code the method declares (-32002 for initialize) and a JSON-RPC code', () => {
    const s = new AcpSniffer()
    s.frame('in', v1Init(3))
    s.frame('out', { jsonrpc: '2.0', id: 3, error: { code: -32002, message: 'Resource not found' } })
    s.frame('out', { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })
    expect(s.violations).toEqual([])
  })

  it('flags an error that is not {code:int, message:string}', () => {
    const s = v1()
    s.frame('in', { jsonrpc: '2.0', id: 4, method: 'session/list', params: {} })
    s.frame('out', { jsonrpc: '2.0', id: 4, error: { code: '-32603', message: 'x' } })
    expect(problems(s.violations)).toEqual(['error is not {code:int, message:string}'])
  })

  it('flags a response to an id never requested', () => {
    const s = v1()
    s.frame('out', { jsonrpc: '2.0', id: 99, result: {} })
    expect(problems(s.violations)).toEqual(['response to unknown request id 99'])
  })

  it('flags a second response to the same id', () => {
    const s = new AcpSniffer()
    s.frame('in', v1Init(1))
    s.frame('out', v1InitOk(1))
    s.frame('out', v1InitOk(1))
    expect(problems(s.violations)).toEqual(['response to unknown request id 1'])
  })

  it('flags an outbound frame whose jsonrpc is not "2.0"', () => {
    const s = v1()
    s.frame('out', {
      jsonrpc: '1.0',
      method: 'session/update',
      params: {
        sessionId: 's',
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } },
      },
    })
    expect(problems(s.violations)).toEqual(['"jsonrpc" is not "2.0"'])
  })

  it('flags an outbound frame that is not a JSON object', () => {
    const s = v1()
    s.frame('out', [1, 2])
    expect(problems(s.violations)).toEqual(['not a JSON object'])
  })

  it('flags bad inbound params unless the frame is marked invalid', () => {
    const bad = {
      jsonrpc: '2.0',
      id: 5,
      method: 'initialize',
      params: { protocolVersion: 1, clientCapabilities: 'everything' },
    }
    const marked = new AcpSniffer()
    marked.frame('in', bad, { invalid: true })
    expect(marked.violations).toEqual([])
    const unmarked = new AcpSniffer()
    unmarked.frame('in', bad)
    expect(problems(unmarked.violations)).toEqual([expect.stringMatching(/^params of initialize: clientCapabilities:/)])
  })

  it('an initialize with {} params selects the seed dialect', () => {
    const s = new AcpSniffer()
    s.frame('in', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
    expect(s.dialect).toBe('seed')
  })

  it('checks a seed initialize result against the seed schema: "0.1" passes, integer 1 is flagged', () => {
    const good = new AcpSniffer()
    good.frame('in', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
    good.frame('out', { jsonrpc: '2.0', id: 1, result: { protocolVersion: '0.1', capabilities: {} } })
    expect(good.violations).toEqual([])

    const bad = new AcpSniffer()
    bad.frame('in', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
    bad.frame('out', { jsonrpc: '2.0', id: 1, result: { protocolVersion: 1, capabilities: {} } })
    expect(problems(bad.violations)).toEqual([expect.stringMatching(/^result of initialize: /)])
  })

  it('the seed dialect accepts the seed tool_result update that v1 rejects', () => {
    const update = { sessionUpdate: 'tool_result', callId: 'c1', success: true, output: 'ok' }
    const seed = new AcpSniffer()
    seed.frame('in', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
    seed.frame('out', {
      jsonrpc: '2.0',
      method: 'session/update',
      params: { sessionId: 'otter-1', eventId: 1, update },
    })
    expect(seed.violations).toEqual([])
    const acp = v1()
    acp.frame('out', chunk(update))
    expect(acp.violations).toHaveLength(1)
  })
})

// ================================================================ JSON-lines RPC
describe('RpcSniffer', () => {
  it('flags a MessageEvent missing done', () => {
    const s = new RpcSniffer()
    s.frame('out', { type: 'message', role: 'assistant', content: 'hi' })
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^MessageEvent: done: /)])
  })

  it('accepts a complete MessageEvent', () => {
    const s = new RpcSniffer()
    s.frame('out', { type: 'message', role: 'assistant', content: 'hi', done: true })
    expect(s.violations).toEqual([])
  })

  it('flags an unknown outbound type', () => {
    const s = new RpcSniffer()
    s.frame('out', { type: 'telemetry', data: 1 })
    expect(problems(s.violations)).toEqual(['unknown outbound message type "telemetry"'])
  })

  it('flags an outbound frame that is not an object', () => {
    const s = new RpcSniffer()
    s.frame('out', 'ok')
    expect(problems(s.violations)).toEqual(['not a JSON object'])
  })

  it('accepts a correct RpcResponse, with and without type', () => {
    const s = new RpcSniffer()
    s.frame('out', { type: 'response', command: 'get_state', id: 's1', success: true, error: '' })
    s.frame('out', { command: 'get_state', id: null, success: false, error: 'busy' })
    expect(s.violations).toEqual([])
  })

  it('flags an RpcResponse with an extra field', () => {
    const s = new RpcSniffer()
    s.frame('out', { type: 'response', command: 'get_state', id: 1, success: true, error: '', extra: 1 })
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^RpcResponse: /)])
  })

  it('flags a command with a wrong field type inbound (prompt message: 42)', () => {
    const s = new RpcSniffer()
    s.frame('in', { type: 'prompt', message: 42 })
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^command prompt: message: /)])
  })

  it('does not flag the same command when it is marked invalid', () => {
    const s = new RpcSniffer()
    s.frame('in', { type: 'prompt', message: 42 }, { invalid: true })
    expect(s.violations).toEqual([])
  })

  it('flags an inbound unknown command', () => {
    const s = new RpcSniffer()
    s.frame('in', { type: 'launch_missiles' })
    expect(problems(s.violations)).toEqual(['not a known command'])
  })

  it('accepts a correct command', () => {
    const s = new RpcSniffer()
    s.frame('in', { type: 'get_state', id: 7 })
    s.frame('in', { type: 'prompt', id: 'p', message: 'hi' })
    expect(s.violations).toEqual([])
  })
})

// ================================================================ HTTP
const HEALTH_OK = { status: 'ok', version: '0.1.0', started_at: '2026-01-01T00:00:00.000Z' }
const exchange = (x: Partial<HttpExchange>): HttpExchange => ({
  method: 'GET',
  path: '/health',
  status: 200,
  contentType: 'application/json',
  body: HEALTH_OK,
  ...x,
})

describe('HttpSniffer', () => {
  it('accepts a correct /health 200', () => {
    const s = new HttpSniffer()
    s.exchange(exchange({}))
    expect(s.violations).toEqual([])
  })

  it('flags a /health 200 body missing status', () => {
    const s = new HttpSniffer()
    const { status: _omit, ...body } = HEALTH_OK
    s.exchange(exchange({ body }))
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^health\.get 200 body: status: /)])
  })

  it('flags a declared JSON error status whose body lacks `error` (GET /info 401)', () => {
    const s = new HttpSniffer()
    s.exchange(exchange({ path: '/info', status: 401, body: { message: 'unauthorized' } }))
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^info\.get 401 body: error: /)])
  })

  it('flags an error body lacking `error` on a status that falls to `default` (GET /health 500)', () => {
    const s = new HttpSniffer()
    s.exchange(exchange({ status: 500, body: { status: 500, message: 'HTTPError' } }))
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^health\.get 500 body: /)])
  })

  it('flags a 404 for an unknown route whose body lacks `error`, and accepts one that has it', () => {
    const bad = new HttpSniffer()
    bad.exchange(exchange({ path: '/nowhere', status: 404, body: { message: 'not found' } }))
    expect(problems(bad.violations)).toEqual(['error response lacks the ErrorBody shape'])
    const good = new HttpSniffer()
    good.exchange(exchange({ path: '/nowhere', status: 404, body: { error: 'not_found' } }))
    expect(good.violations).toEqual([])
  })

  it('flags a 204 with a body (POST /sessions/{id}/cancel)', () => {
    const s = new HttpSniffer()
    s.exchange(
      exchange({
        method: 'POST',
        path: '/sessions/otter-1/cancel',
        status: 204,
        contentType: 'text/plain',
        body: 'done',
      }),
    )
    expect(problems(s.violations)).toEqual(['sessions.cancel 204 must have no body'])
  })

  it('accepts a 204 without a body', () => {
    const s = new HttpSniffer()
    s.exchange(
      exchange({ method: 'POST', path: '/sessions/otter-1/cancel', status: 204, contentType: null, body: undefined }),
    )
    expect(s.violations).toEqual([])
  })

  it('flags a response content type the operation does not declare (text/plain for GET /health)', () => {
    const s = new HttpSniffer()
    s.exchange(exchange({ contentType: 'text/plain; charset=utf-8', body: 'ok' }))
    expect(problems(s.violations)).toEqual(['health.get 200 is not declared as text/plain'])
  })

  it('flags a success status on a path the spec does not have', () => {
    const s = new HttpSniffer()
    s.exchange(exchange({ path: '/admin', status: 200, body: { error: 'x' } }))
    expect(problems(s.violations)).toEqual(['no spec operation for GET /admin, yet status 200'])
  })

  it('leaves the pages for people alone (/ to the console, /ui, /docs) but not look-alike paths', () => {
    const s = new HttpSniffer()
    s.exchange(exchange({ path: '/', status: 302, contentType: null, body: undefined }))
    s.exchange(
      exchange({
        path: '/docs/http.html',
        status: 200,
        contentType: 'text/html; charset=utf-8',
        body: '<!DOCTYPE html>',
      }),
    )
    s.exchange(exchange({ path: '/uix', status: 200, body: { error: 'x' } }))
    expect(problems(s.violations)).toEqual(['no spec operation for GET /uix, yet status 200'])
  })

  it('flags a bad request body unless marked invalid', () => {
    const x = exchange({
      method: 'POST',
      path: '/sessions',
      requestBody: { prompt: 42, unknown: true },
      status: 400,
      body: { error: 'bad_request' },
    })
    const flagged = new HttpSniffer()
    flagged.exchange(x)
    expect(flagged.violations.filter((v) => v.dir === 'in')).toHaveLength(1)
    const marked = new HttpSniffer()
    marked.exchange(x, { invalid: true })
    expect(marked.violations.filter((v) => v.dir === 'in')).toEqual([])
  })

  it('refuses frame(): HTTP is checked by whole exchanges', () => {
    expect(() => new HttpSniffer().frame()).toThrow(/use exchange\(\)/)
  })
})

// ================================================================ SSE
const EVENTS = '/sessions/otter-20260101T000000Z-0000aaaa/events'
const envelope = (type: string, metadata: unknown) =>
  JSON.stringify({ id: 'evt-0123abcd', type, metadata, ts: '2026-01-01T00:00:00.000Z' })
const textDelta = (over: Partial<{ id: string; event: string; data: string; retry: number }> = {}) => ({
  id: '1',
  event: 'text_delta',
  data: envelope('text_delta', { text: 'hi' }),
  ...over,
})

describe('SseSniffer', () => {
  it('accepts a valid text_delta record (with retry on it)', () => {
    const s = new SseSniffer(EVENTS)
    s.frame('out', textDelta({ retry: 1000 }))
    s.frame('out', textDelta({ id: '2' }))
    expect(s.violations).toEqual([])
  })

  it('flags an unknown event name on /sessions/{id}/events', () => {
    const s = new SseSniffer(EVENTS)
    s.frame('out', textDelta({ event: 'text_chunk' }))
    expect(problems(s.violations)).toEqual(['event "text_chunk" is not defined on sessionsEvents'])
  })

  it('flags a data: that is not JSON', () => {
    const s = new SseSniffer(EVENTS)
    s.frame('out', textDelta({ data: '{"id":' }))
    expect(problems(s.violations)).toEqual(['data is not JSON'])
  })

  it('flags a data: that does not fit the SseEnvelope (metadata of no event shape)', () => {
    const s = new SseSniffer(EVENTS)
    s.frame('out', textDelta({ data: envelope('text_delta', { txt: 'hi' }) }))
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^text_delta data: /)])
  })

  for (const id of ['0', 'abc', '-1', '1.5', '01']) {
    it(`flags an id: that is not a positive integer (${JSON.stringify(id)})`, () => {
      const s = new SseSniffer(EVENTS)
      s.frame('out', textDelta({ id }))
      expect(problems(s.violations)).toEqual([expect.stringMatching(/^text_delta frame: id: /)])
    })
  }

  it('flags an id: on the end record, which must carry none', () => {
    const s = new SseSniffer(EVENTS)
    s.frame('out', { event: 'end', data: JSON.stringify({ session_id: 'otter-1', success: true }) })
    expect(s.violations).toEqual([])
    s.frame('out', { id: '9', event: 'end', data: JSON.stringify({ session_id: 'otter-1', success: true }) })
    expect(problems(s.violations)).toEqual([expect.stringMatching(/^end frame: /)])
  })

  it('flags any record on a path with no SSE channel in the spec', () => {
    const s = new SseSniffer('/events')
    s.frame('out', textDelta())
    expect(problems(s.violations)).toEqual(['no SSE channel in the spec for this path'])
  })

  it('ignores the client→server direction', () => {
    const s = new SseSniffer(EVENTS)
    s.frame('in', { junk: true })
    expect(s.violations).toEqual([])
  })
})
