/**
 * Mixed versions of the instance link (specs/asyncapi/instances.asyncapi.yaml `x-link-version`,
 * docs/scale-out.md "Rolling upgrades"), against a real `otter serve --store redis://…` process:
 * a command for a session held by an instance of another version is refused by that instance
 * (here a stand-in on the real Redis lists) and the client is told so on its wire (HTTP 503 naming
 * the owner and both versions), with nothing run; a request from an instance of another version,
 * or from one without a version, is answered `Incompatible` by the server and not run.
 */
import { createClient, type RedisClientType } from '@redis/client'
import { setTimeout as delay } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { startInstances, type Instances } from '../store/fixtures/instances.ts'
import { BusRequestSchema, INSTANCE_LINK_VERSION } from '../../generated/instances/forward.gen.ts'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function redisOf(c: Instances): Promise<RedisClientType> {
  const r: RedisClientType = createClient({ url: c.redis.url })
  r.on('error', () => {})
  await r.connect()
  cleanups.push(() => r.destroy())
  return r
}

describe('instances of different link versions', () => {
  it('refuse each other: nothing runs, and the client is told which instance runs which version', async () => {
    const c = await startInstances(1)
    cleanups.push(() => c.stop())
    const [a] = c.instances
    const r = await redisOf(c)
    const created = await fetch(`${a!.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: '!say hello' }),
    })
    expect(created.status).toBe(201)
    const { session_id: id } = (await created.json()) as { session_id: string }
    const ownerKey = `chimera:s:{${id}}:owner`
    const instanceA = (await r.get(ownerKey))!
    expect(instanceA).toBeTruthy()
    // A lets the idle session go (a gate on Redis's state), then an instance of the next version
    // holds it: its lease and its liveness key, as that instance would keep them.
    while ((await r.exists(ownerKey)) === 1) await delay(20)
    const later = 'later-1'
    const laterVersion = INSTANCE_LINK_VERSION + 1
    await r.set(ownerKey, later, { PX: 60_000 })
    await r.set(`chimera:i:{${later}}:alive`, '1', { PX: 60_000 })
    const inbox = await redisOf(c)
    const refusing = (async () => {
      const got = await inbox.blPop(`chimera:i:{${later}}:inbox`, 20)
      const req = BusRequestSchema.parse(JSON.parse(got!.element))
      const reply = { t: 'rep', id: req.id, from: later, v: laterVersion, payload: { incompatible: true } }
      await r.rPush(`chimera:i:{${req.from}}:replies`, JSON.stringify(reply))
      return req
    })()
    refusing.catch(() => {}) // awaited below

    const res = await fetch(`${a!.url}/sessions/${id}/cancel`, { method: 'POST' })
    const body = (await res.json()) as { error: string; message: string }
    const req = await refusing
    expect(req).toMatchObject({ from: instanceA, v: INSTANCE_LINK_VERSION, payload: { kind: 'http' } })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('2')
    expect(body.error).toBe('service_unavailable')
    expect(body.message).toBe(
      `session ${id} is running on instance ${later}, which runs an incompatible version (instance link version ${laterVersion}; this instance speaks ${INSTANCE_LINK_VERSION}): nothing was run; retry once that instance has let the session go (idle) or been upgraded`,
    )

    // The other way: requests to A from an instance without a version and from a later one.
    const command = { kind: 'session', body: { op: 'cancel', id } }
    await r.rPush(
      `chimera:i:{${instanceA}}:inbox`,
      [
        { t: 'req', id: 'old-request', from: 'old-1', payload: command },
        { t: 'req', id: 'later-request', from: later, v: laterVersion, payload: command },
      ].map((m) => JSON.stringify(m)),
    )
    const refused = { t: 'rep', from: instanceA, v: INSTANCE_LINK_VERSION, payload: { incompatible: true } }
    const old = await inbox.blPop(`chimera:i:{old-1}:replies`, 20)
    expect(JSON.parse(old!.element)).toEqual({ ...refused, id: 'old-request' })
    const next = await inbox.blPop(`chimera:i:{${later}}:replies`, 20)
    expect(JSON.parse(next!.element)).toEqual({ ...refused, id: 'later-request' })
    expect(a!.stderr().split('refused a request of another version of the instance link').length - 1).toBe(2)
  })
})
