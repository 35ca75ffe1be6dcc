/** Same-origin requests (the /ui console posting to its own server) are not CORS requests. */
import { describe, expect, it } from 'vitest'
import { corsHeaders, isSameOrigin } from './guard.ts'

const req = (host: string, origin: string): Request =>
  new Request(`http://${host}/sessions`, { method: 'POST', headers: { host, origin } })
const guard = { cors: ['http://localhost:3000'], allowedHosts: [] }

describe('same-origin requests', () => {
  it('an Origin equal to the Host (scheme, name and port) passes without CORS headers', () => {
    expect(isSameOrigin('http://127.0.0.1:5173', req('127.0.0.1:5173', 'http://127.0.0.1:5173'))).toBe(true)
    expect(corsHeaders(req('127.0.0.1:5173', 'http://127.0.0.1:5173'), guard)).toEqual({})
    expect(isSameOrigin('http://localhost:5173', req('LOCALHOST:5173', 'http://localhost:5173'))).toBe(true)
  })

  it('another port, another name, a path, `null` or another scheme is cross-origin: the allow-list decides', () => {
    for (const origin of [
      'http://127.0.0.1:5174',
      'http://localhost:5173',
      'http://127.0.0.1:5173/ui',
      'null',
      'file://127.0.0.1:5173',
      'http://127.0.0.1:5173.evil.example',
    ]) {
      expect(isSameOrigin(origin, req('127.0.0.1:5173', origin)), origin).toBe(false)
      expect(() => corsHeaders(req('127.0.0.1:5173', origin), guard), origin).toThrow(/not in the --cors allow-list/)
    }
    expect(corsHeaders(req('127.0.0.1:5173', 'http://localhost:3000'), guard)).toMatchObject({
      'access-control-allow-origin': 'http://localhost:3000',
    })
  })

  it("on a non-loopback bind (no Host check) a rebound name is not the server's own origin; its address is", () => {
    const lan = { cors: [], servedHosts: ['10.0.0.5'] }
    const rebound = req('evil.example:5173', 'http://evil.example:5173')
    expect(isSameOrigin('http://evil.example:5173', rebound, lan)).toBe(false)
    expect(() => corsHeaders(rebound, lan)).toThrow(/not in the --cors allow-list/)
    expect(corsHeaders(req('10.0.0.5:5173', 'http://10.0.0.5:5173'), lan)).toEqual({})
  })
})
