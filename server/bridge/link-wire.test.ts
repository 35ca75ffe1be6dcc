/**
 * The bridge's own messages as specs/asyncapi/bridge.asyncapi.yaml describes them: the control
 * link's `open` (anything else ignored, as a newer relay may say more), the channel address an
 * editor dials, and the close codes the relay uses.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { BRIDGE_PATH, CLIENT_PATH, CLOSE, channelUrl, parseOpenChannel } from './link-wire.ts'

const spec = parse(readFileSync(new URL('../../specs/asyncapi/bridge.asyncapi.yaml', import.meta.url), 'utf8')) as {
  channels: Record<string, { address: string }>
  info: { 'x-close-codes': Record<string, number> }
}

describe('the bridge link as its spec says', () => {
  it('reads the open message and ignores anything else', () => {
    expect(parseOpenChannel('{"type":"open","channel":"c-1"}')).toEqual({ type: 'open', channel: 'c-1' })
    // More fields from a newer relay: the open is still read.
    expect(parseOpenChannel('{"type":"open","channel":"c-2","hint":1}')).toEqual({ type: 'open', channel: 'c-2' })
    for (const text of [
      'not json',
      'null',
      '[]',
      '{"type":"close","channel":"c-1"}',
      '{"type":"open"}',
      '{"type":"open","channel":""}',
      '{"type":"open","channel":"../x"}',
      `{"type":"open","channel":"${'a'.repeat(65)}"}`,
      '{"type":"open","channel":7}',
    ])
      expect(parseOpenChannel(text), text).toBeUndefined()
  })

  it("dials the channel address under the bridge URL's path, keeping its query", () => {
    expect(BRIDGE_PATH).toBe(spec.channels.control!.address)
    expect(CLIENT_PATH).toBe(spec.channels.client!.address)
    const u = channelUrl(new URL('wss://relay.example/bridge?route=eu'), 'c-1')
    expect(u.href).toBe('wss://relay.example/bridge/channels/c-1?route=eu')
    expect(u.pathname).toBe(spec.channels.channel!.address.replace('{channel}', 'c-1'))
    expect(channelUrl(new URL('ws://127.0.0.1:1/prefix/bridge/'), 'x').pathname).toBe('/prefix/bridge/channels/x')
  })

  it('closes with the codes of the spec, in the application range', () => {
    expect(CLOSE).toEqual(spec.info['x-close-codes'])
    for (const code of Object.values(CLOSE)) expect(code >= 4000 && code <= 4999).toBe(true)
  })
})
