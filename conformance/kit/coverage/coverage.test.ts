/** The coverage counting rule: ACP items count in the dialect the transcript's `initialize` selects. */
import { describe, expect, it } from 'vitest'
import { parseCorpusFile } from '../corpus/load.ts'
import { touches } from './coverage.ts'

const corpus = (header: Record<string, unknown>, ...steps: unknown[]) =>
  parseCorpusFile(
    [{ transcript: 1, title: 't', surface: 'acp', id: 'acp.test.x', section: 's', ...header }, ...steps]
      .map((l) => JSON.stringify(l))
      .join('\n'),
    'x.jsonl',
    '.',
  )

describe('coverage of ACP transcripts', () => {
  it('counts a v1 transcript bound to the ferret transport as v1 items, not seed ones', () => {
    const e = corpus(
      { transports: ['acp-ferret'] },
      { send: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } } },
      { send: { jsonrpc: '2.0', id: 1, method: '_chimera/session/replay', params: { sessionId: 's' } } },
      { expect: { jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'usage_update' } } } },
      { expect: { jsonrpc: '2.0', id: 1, error: { code: -32002 } } },
    )
    const t = touches(e)
    expect([...t].sort()).toEqual([
      'acp.v1 error -32002',
      'acp.v1 method _chimera/session/replay',
      'acp.v1 method initialize',
      'acp.v1 method session/update',
      'acp.v1 update usage_update',
    ])
  })

  it('follows a renegotiating initialize, and reads frames before any initialize in the transport dialect', () => {
    const e = corpus(
      { transports: ['acp-v1'] },
      { expect: { jsonrpc: '2.0', id: null, error: { code: -32700 } } },
      { send: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '0.2' } } },
      { send: { jsonrpc: '2.0', id: 2, method: 'session/load', params: {} } },
      { send: { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: 7 } } },
      { send: { jsonrpc: '2.0', id: 4, method: 'session/load', params: {} } },
    )
    const t = touches(e)
    expect(t.has('acp.v1 error -32700')).toBe(true)
    expect(t.has('acp.seed method session/load')).toBe(true)
    expect(t.has('acp.v1 method session/load')).toBe(true)
    expect(t.has('acp.seed error -32700')).toBe(false)
  })

  it('counts a ferret kind only from the params of a seed session/update, with or without eventId in the pattern', () => {
    const e = corpus(
      { transports: ['acp-ferret'] },
      { send: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } },
      {
        expect: {
          jsonrpc: '2.0',
          method: 'session/update',
          params: { kind: 'cost_update', input: { $type: 'integer' } },
        },
      },
      { expect: { jsonrpc: '2.0', id: 1, result: { kind: 'turn_end' } } },
    )
    const t = touches(e)
    expect(t.has('acp.seed update cost_update')).toBe(true)
    expect(t.has('acp.seed update turn_end')).toBe(false)
  })
})
