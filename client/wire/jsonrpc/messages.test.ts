/**
 * classify()/parseLine() table: what each JSON-RPC 2.0 envelope becomes (request, notification,
 * response, or invalid with the id to answer and the standard error code).
 */
import { describe, expect, it } from 'vitest'
import { classify, parseLine, type Incoming } from './messages.ts'

const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600

type Want =
  | { kind: 'request'; id: string | number | null; method: string; params?: unknown }
  | { kind: 'notification'; method: string; params?: unknown }
  | { kind: 'response'; id: string | number | null; result?: unknown; error?: unknown }
  | { kind: 'invalid'; id: string | number | null; code: number }

/** Rows are JSON text, so ids and numbers go through JSON.parse exactly as on the wire. */
const ROWS: [name: string, line: string, want: Want][] = [
  // ---------------------------------------------------------------- requests
  [
    'request with a string id',
    '{"jsonrpc":"2.0","id":"a1","method":"initialize","params":{"protocolVersion":1}}',
    { kind: 'request', id: 'a1', method: 'initialize', params: { protocolVersion: 1 } },
  ],
  [
    'request with a number id',
    '{"jsonrpc":"2.0","id":7,"method":"session/new","params":{}}',
    { kind: 'request', id: 7, method: 'session/new', params: {} },
  ],
  [
    'request with id 0',
    '{"jsonrpc":"2.0","id":0,"method":"m"}',
    { kind: 'request', id: 0, method: 'm', params: undefined },
  ],
  [
    'request with a null id',
    '{"jsonrpc":"2.0","id":null,"method":"m","params":[]}',
    { kind: 'request', id: null, method: 'm', params: [] },
  ],
  [
    'request with a negative id',
    '{"jsonrpc":"2.0","id":-3,"method":"m"}',
    { kind: 'request', id: -3, method: 'm', params: undefined },
  ],
  [
    'request with array params',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":[1,"x"]}',
    { kind: 'request', id: 1, method: 'm', params: [1, 'x'] },
  ],
  [
    'request with the largest safe integer id',
    `{"jsonrpc":"2.0","id":${Number.MAX_SAFE_INTEGER},"method":"m"}`,
    { kind: 'request', id: Number.MAX_SAFE_INTEGER, method: 'm', params: undefined },
  ],

  // ---------------------------------------------------------------- notifications
  [
    'notification (no id)',
    '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}',
    { kind: 'notification', method: 'session/cancel', params: { sessionId: 's' } },
  ],
  [
    'notification without params',
    '{"jsonrpc":"2.0","method":"$/ping"}',
    { kind: 'notification', method: '$/ping', params: undefined },
  ],

  // ---------------------------------------------------------------- responses
  [
    'response with a result',
    '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}',
    { kind: 'response', id: 1, result: { ok: true } },
  ],
  [
    'response with a null result',
    '{"jsonrpc":"2.0","id":"x","result":null}',
    { kind: 'response', id: 'x', result: null },
  ],
  [
    'response with an error',
    '{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}',
    { kind: 'response', id: 2, error: { code: -32601, message: 'Method not found', data: { method: 'x' } } },
  ],
  [
    'error response with a null id (parse error answer)',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    { kind: 'response', id: null, error: { code: -32700, message: 'Parse error' } },
  ],

  // ---------------------------------------------------------------- invalid: not an object
  [
    'a batch array is invalid (batches unsupported)',
    '[{"jsonrpc":"2.0","id":1,"method":"m"}]',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  ['an empty array is invalid', '[]', { kind: 'invalid', id: null, code: INVALID_REQUEST }],
  ['a number is invalid', '1', { kind: 'invalid', id: null, code: INVALID_REQUEST }],
  ['a string is invalid', '"hello"', { kind: 'invalid', id: null, code: INVALID_REQUEST }],
  ['null is invalid', 'null', { kind: 'invalid', id: null, code: INVALID_REQUEST }],
  ['true is invalid', 'true', { kind: 'invalid', id: null, code: INVALID_REQUEST }],

  // ---------------------------------------------------------------- invalid: envelope
  [
    'missing jsonrpc is invalid and keeps the id',
    '{"id":5,"method":"m"}',
    { kind: 'invalid', id: 5, code: INVALID_REQUEST },
  ],
  [
    'jsonrpc "1.0" is invalid and keeps the id',
    '{"jsonrpc":"1.0","id":"r","method":"m"}',
    { kind: 'invalid', id: 'r', code: INVALID_REQUEST },
  ],
  [
    'jsonrpc 2 (a number) is invalid',
    '{"jsonrpc":2,"id":1,"method":"m"}',
    { kind: 'invalid', id: 1, code: INVALID_REQUEST },
  ],
  [
    'method not a string is invalid and keeps the id',
    '{"jsonrpc":"2.0","id":3,"method":42}',
    { kind: 'invalid', id: 3, code: INVALID_REQUEST },
  ],
  [
    'method null is invalid',
    '{"jsonrpc":"2.0","id":3,"method":null}',
    { kind: 'invalid', id: 3, code: INVALID_REQUEST },
  ],
  [
    'params a number is invalid',
    '{"jsonrpc":"2.0","id":4,"method":"m","params":1}',
    { kind: 'invalid', id: 4, code: INVALID_REQUEST },
  ],
  [
    'params a string is invalid',
    '{"jsonrpc":"2.0","id":4,"method":"m","params":"x"}',
    { kind: 'invalid', id: 4, code: INVALID_REQUEST },
  ],
  [
    'params null is invalid',
    '{"jsonrpc":"2.0","id":4,"method":"m","params":null}',
    { kind: 'invalid', id: 4, code: INVALID_REQUEST },
  ],
  [
    'params a scalar on a notification is invalid with id null',
    '{"jsonrpc":"2.0","method":"m","params":true}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],

  // ---------------------------------------------------------------- invalid: id
  [
    'an object id is invalid, answered with id null',
    '{"jsonrpc":"2.0","id":{"a":1},"method":"m"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  [
    'an array id is invalid, answered with id null',
    '{"jsonrpc":"2.0","id":[1],"method":"m"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  [
    'a boolean id is invalid, answered with id null',
    '{"jsonrpc":"2.0","id":true,"method":"m"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  [
    'an unsafe integer id (2^53) is invalid, answered with id null',
    '{"jsonrpc":"2.0","id":9007199254740992,"method":"m"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  [
    'an id that lost precision in JSON.parse (2^53+1) is invalid',
    '{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  [
    'a large negative unsafe integer id is invalid',
    '{"jsonrpc":"2.0","id":-9007199254740993,"method":"m"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  [
    'an unsafe integer id on a response is invalid too',
    '{"jsonrpc":"2.0","id":1e300,"result":1}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],

  // ---------------------------------------------------------------- invalid: responses
  [
    'both result and error is invalid and keeps the id',
    '{"jsonrpc":"2.0","id":6,"result":1,"error":{"code":1,"message":"x"}}',
    { kind: 'invalid', id: 6, code: INVALID_REQUEST },
  ],
  [
    'an error without code is invalid',
    '{"jsonrpc":"2.0","id":8,"error":{"message":"x"}}',
    { kind: 'invalid', id: 8, code: INVALID_REQUEST },
  ],
  [
    'an error with a string code is invalid',
    '{"jsonrpc":"2.0","id":8,"error":{"code":"-32600","message":"x"}}',
    { kind: 'invalid', id: 8, code: INVALID_REQUEST },
  ],
  // JSON-RPC 2.0 §5.1: "code … MUST be an integer".
  [
    'an error with a fractional code is invalid',
    '{"jsonrpc":"2.0","id":8,"error":{"code":-32600.5,"message":"x"}}',
    { kind: 'invalid', id: 8, code: INVALID_REQUEST },
  ],
  [
    'an error without message is invalid',
    '{"jsonrpc":"2.0","id":8,"error":{"code":-32600}}',
    { kind: 'invalid', id: 8, code: INVALID_REQUEST },
  ],
  [
    'an error that is a string is invalid',
    '{"jsonrpc":"2.0","id":8,"error":"boom"}',
    { kind: 'invalid', id: 8, code: INVALID_REQUEST },
  ],
  [
    'a result without an id is invalid',
    '{"jsonrpc":"2.0","result":1}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST },
  ],
  [
    'an id alone is invalid and keeps the id',
    '{"jsonrpc":"2.0","id":9}',
    { kind: 'invalid', id: 9, code: INVALID_REQUEST },
  ],
  ['an empty object is invalid', '{}', { kind: 'invalid', id: null, code: INVALID_REQUEST }],

  // ---------------------------------------------------------------- parse errors
  [
    'bad JSON is a parse error with id null',
    '{"jsonrpc":"2.0","id":1,',
    { kind: 'invalid', id: null, code: PARSE_ERROR },
  ],
  ['an empty line is a parse error', '', { kind: 'invalid', id: null, code: PARSE_ERROR }],
  [
    'trailing garbage is a parse error',
    '{"jsonrpc":"2.0","id":1,"method":"m"} x',
    { kind: 'invalid', id: null, code: PARSE_ERROR },
  ],
]

/** The comparable part of a classification. */
function shape(m: Incoming): Want {
  switch (m.kind) {
    case 'invalid':
      return { kind: 'invalid', id: m.id, code: m.error.code }
    case 'request':
      return { kind: 'request', id: m.id, method: m.method, params: m.params }
    case 'notification':
      return { kind: 'notification', method: m.method, params: m.params }
    case 'response':
      return 'error' in m
        ? { kind: 'response', id: m.id, error: m.error }
        : { kind: 'response', id: m.id, result: m.result }
  }
}

describe('parseLine / classify', () => {
  for (const [name, text, want] of ROWS) {
    it(name, () => {
      const got = parseLine(text)
      expect(shape(got)).toEqual(want)
      // classify() agrees with parseLine() whenever the text is JSON.
      if (want.kind !== 'invalid' || want.code !== PARSE_ERROR) expect(shape(classify(JSON.parse(text)))).toEqual(want)
    })
  }

  it('a notification has no id property at all', () => {
    expect('id' in parseLine('{"jsonrpc":"2.0","method":"m"}')).toBe(false)
  })

  it('a parse error carries the JSON error detail in data', () => {
    const m = parseLine('{oops')
    if (m.kind !== 'invalid') throw new Error(`expected invalid, got ${m.kind}`)
    expect(m.error.message).toBe('Parse error')
    expect(m.error.data).toEqual({ detail: expect.any(String) })
  })

  it('an invalid request says Invalid request with a detail', () => {
    const m = classify([])
    if (m.kind !== 'invalid') throw new Error(`expected invalid, got ${m.kind}`)
    expect(m.error.toJSON()).toEqual({
      code: INVALID_REQUEST,
      message: 'Invalid request',
      data: { detail: expect.stringMatching(/batch/) },
    })
  })
})
