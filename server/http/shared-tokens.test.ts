/**
 * Session tokens and the singular family's listing with two instances over one Redis (in process:
 * two HTTP apps, two managers, one private redis-server; docs/scale-out.md "Session tokens and
 * live sessions"): a token issued by one instance is valid on the other, scoped as on one server
 * (its own session's singular routes; `403 admin_only` on a master-only route, `401` for another
 * session); `GET /session` on either lists the sessions created on both; a rotated token is dead
 * on both, the new one valid on both; a deleted session's token is dead, its id unlisted and its
 * stream on the other instance ended. A
 * command sent to the instance that does not run the session is forwarded with who sent it, and
 * no token is written to Redis.
 */
import { createClient } from '@redis/client'
import { afterEach, describe, expect, it } from 'vitest'
import { testEnv, until } from '../core/fixtures/harness.ts'
import { createLogger } from '../log.ts'
import { startRedis } from '../store/fixtures/redis-server.ts'
import { RedisEventStore } from '../store/redis-store.ts'
import { createHttpServerApp } from './server-app.ts'

const MASTER = 'master-secret'
const stops: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

async function cluster() {
  const redis = await startRedis()
  stops.push(() => redis.stop())
  const env = testEnv('chimera-shared-tokens-')
  stops.push(() => env.cleanup())
  const logger = createLogger({ level: 'error', sink: () => {} })
  const instance = async (id: string) => {
    const store = new RedisEventStore({ url: redis.url, instanceId: id })
    await store.connect()
    stops.push(() => store.close())
    const manager = env.manager({
      store,
      auditStore: store.auditStore(),
      leases: store.leases!,
      forward: (handle) => store.bus(handle),
    })
    const http = createHttpServerApp({
      version: 't',
      startedAt: new Date(),
      logger,
      manager,
      masterToken: MASTER,
      liveSessions: (ttlMs) => store.liveSessions(ttlMs),
    })
    stops.push(() => http.close())
    const fetch = (path: string, token: string | undefined, init: RequestInit = {}) => {
      const headers = new Headers(init.headers)
      if (token !== undefined) headers.set('authorization', `Bearer ${token}`)
      if (init.body !== undefined) headers.set('content-type', 'application/json')
      return Promise.resolve(http.app.fetch(new Request(`http://127.0.0.1${path}`, { ...init, headers })))
    }
    return async (
      path: string,
      token: string | undefined,
      init: RequestInit & { head?: (r: Response) => void } = {},
    ) => {
      const r = await fetch(path, token, init)
      init.head?.(r)
      const text = await r.text()
      const json = (r.headers.get('content-type') ?? '').startsWith('application/json')
      return { status: r.status, text, body: json && text ? (JSON.parse(text) as unknown) : undefined }
    }
  }
  return { redis, a: await instance('A'), b: await instance('B') }
}

describe('session tokens over two instances', () => {
  it('are valid on every instance, scoped as on one server, rotated and dropped everywhere', async () => {
    const { redis, a, b } = await cluster()
    const made = await a('/session', MASTER, { method: 'POST' })
    expect(made.status).toBe(201)
    const { session_id: s, session_token: t1 } = made.body as { session_id: string; session_token: string }
    const other = (await b('/session', MASTER, { method: 'POST' })).body as { session_id: string }
    // Listed on both, whichever created it.
    for (const call of [a, b]) {
      const list = await call('/session', MASTER)
      expect(list.status).toBe(200)
      expect(list.body).toEqual(expect.arrayContaining([s, other.session_id]))
    }
    expect((await a(`/session/${s}`, t1)).status).toBe(200)
    // The token on the instance that did not issue it (a read, and a command forwarded to A).
    expect((await b(`/session/${s}`, t1)).status).toBe(200)
    expect((await b(`/session/${s}/message`, t1, { method: 'POST', body: '{"message":"!say hi"}' })).status).toBe(202)
    expect((await b(`/session/${s}/cancel`, t1, { method: 'POST' })).status).toBe(204)
    // Scoped: another session's routes 401, a master-only route 403, no token 401.
    expect((await b(`/session/${other.session_id}`, t1)).status).toBe(401)
    expect((await b(`/sessions/${s}`, t1, { method: 'PATCH', body: '{"title":"x"}' })).status).toBe(403)
    expect((await b('/session', t1)).status).toBe(403)
    expect((await b(`/session/${s}`, undefined)).status).toBe(401)
    // Rotated on B: the old token is dead on both, the new one valid on both.
    const rotated = await b(`/session/${s}/rotate-token`, MASTER, { method: 'POST' })
    expect(rotated.status).toBe(200)
    const t2 = (rotated.body as { session_token: string }).session_token
    for (const call of [a, b]) {
      expect((await call(`/session/${s}`, t1)).status).toBe(401)
      expect((await call(`/session/${s}`, t2)).status).toBe(200)
    }
    // Redis holds digests, never a token.
    const raw = createClient({ url: redis.url })
    await raw.connect()
    stops.push(() => raw.destroy())
    const everything = JSON.stringify(
      await Promise.all(
        (await raw.keys('*')).map(async (k) => [k, (await raw.type(k)) === 'string' ? await raw.get(k) : ''] as const),
      ),
    )
    for (const secret of [t1, t2, MASTER]) expect(everything).not.toContain(secret)
    // Deleted through B with its own token: dead on A, unlisted everywhere, its stream on A ended.
    let opened!: () => void
    const open = new Promise<void>((r) => (opened = r))
    const stream = a(`/session/${s}/events`, t2, { head: () => opened() })
    await open
    await until(async () => (await raw.pubSubNumSub('chimera:forgotten'))['chimera:forgotten'] === 2)
    expect((await b(`/session/${s}`, t2, { method: 'DELETE' })).status).toBe(204)
    const ended = await stream
    expect(ended.status).toBe(200)
    expect(ended.text).toMatch(/event: end\ndata: \{"session_id":"[^"]+","success":false\}/)
    expect((await a(`/session/${s}`, t2)).status).toBe(401)
    expect((await a(`/session/${s}`, MASTER)).status).toBe(404)
    expect((await a('/session', MASTER)).body).toEqual([other.session_id])
  })
})
