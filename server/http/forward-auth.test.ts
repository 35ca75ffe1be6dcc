/**
 * Forwarding between instances (forward.ts) runs after the request's credentials were checked
 * where it arrived, and reads a command's body within the body limit: a request without a valid
 * token claims no lease and reaches no other instance, and an oversized body is refused (413)
 * without being read whole or forwarded.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from '../log.ts'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import type { LeaseClaim, SessionLeases } from '../store/types.ts'
import { createHttpServerApp, type HttpServerApp } from './server-app.ts'

const MASTER = 'master-secret'
let env: TestEnv | undefined
let http: HttpServerApp | undefined

afterEach(async () => {
  http?.close()
  await env?.cleanup()
  env = http = undefined
})

/** Leases that say another instance runs every session; records what was claimed and forwarded. */
function otherInstance() {
  const claimed: string[] = []
  const forwarded: unknown[] = []
  const leases: SessionLeases = {
    instanceId: 'here',
    ttlMs: 5000,
    renewMs: 1500,
    claim: (id): Promise<LeaseClaim> => (claimed.push(id), Promise.resolve({ kind: 'other', owner: 'there' })),
    holds: () => false,
    owner: () => Promise.resolve('there'),
    instanceAlive: () => Promise.resolve(true),
    release: () => Promise.resolve(),
    using: (_id, fn) => fn(),
    setHooks: () => {},
  }
  const connect = () => ({
    request: (_target: string, payload: unknown) => {
      forwarded.push(payload)
      return Promise.resolve({
        kind: 'reply' as const,
        payload: { status: 204, headers: [] as [string, string][], body: '' },
      })
    },
  })
  return { claimed, forwarded, forwarding: { leases, connect } }
}

function start(forwarding: ReturnType<typeof otherInstance>['forwarding']) {
  env = testEnv('chimera-forward-auth-')
  http = createHttpServerApp({
    version: 't',
    startedAt: new Date(),
    logger: createLogger({ level: 'error', sink: () => {} }),
    manager: env.manager({ leases: forwarding.leases, forward: forwarding.connect }),
    masterToken: MASTER,
  })
  return (path: string, init: RequestInit = {}) => http!.app.fetch(new Request(`http://127.0.0.1${path}`, init))
}

describe('forwarding a command to the instance that runs its session', () => {
  it('checks the token where the request arrives: no lease is claimed and nothing is forwarded for a bad one', async () => {
    const o = otherInstance()
    const call = start(o.forwarding)
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const r = await call('/session/some-session/cancel', { method: 'POST', headers })
      expect(r.status).toBe(401)
    }
    const approve = await call('/tool/approve', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'some-session', request_id: 'r', decision: 'allow' }),
    })
    expect(approve.status).toBe(401)
    expect(o.claimed).toEqual([])
    expect(o.forwarded).toEqual([])
    // With the master token the same command goes to the owner.
    const ok = await call('/session/some-session/cancel', {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}` },
    })
    expect(ok.status).toBe(204)
    expect(o.claimed).toEqual(['some-session'])
    expect(o.forwarded).toHaveLength(1)
    // Who sent it travels, not the token: Redis never holds the client's credentials.
    const sent = (o.forwarded[0] as { body: { headers: [string, string][]; principal?: unknown } }).body
    expect(sent.headers.map(([k]) => k)).not.toContain('authorization')
    expect(JSON.stringify(sent)).not.toContain(MASTER)
    expect(sent.principal).toEqual({ master: true })
  })

  it('refuses a body over the limit where it arrives (413), without forwarding it', async () => {
    const o = otherInstance()
    const call = start(o.forwarding)
    const big = JSON.stringify({
      session_id: 'some-session',
      request_id: 'x'.repeat(5 * 1024 * 1024),
      decision: 'allow',
    })
    const r = await call('/tool/approve', {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: big,
    })
    expect(r.status).toBe(413)
    expect(o.forwarded).toEqual([])
  })
})
