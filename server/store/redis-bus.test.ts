/**
 * The forwarding link between instances (redis-bus.ts) on a private Redis, as
 * specs/asyncapi/instances.asyncapi.yaml describes it: a request pushed to the owner's inbox is
 * run by the owner and answered on the requester's reply list; what is not a request or a reply
 * of that document (not JSON, `null`, a request without a payload, an unknown `t`) is dropped
 * with a warning, and the owner goes on serving the next request. The link's version is checked
 * by the bus: a request of another version runs nothing and is answered `Incompatible`, which the
 * requester's router reports as a coded error naming both versions; an answer whose `ok` is not
 * its operation's result is an error too, never handed on.
 */
import { createClient, type RedisClientType } from '@redis/client'
import { afterEach, describe, expect, it } from 'vitest'
import type { Logger } from '../log.ts'
import { startRedis } from './fixtures/redis-server.ts'
import { RedisBus } from './redis-bus.ts'
import { instanceKeys } from './redis-shared.ts'
import { ChimeraError } from '../errors.ts'
import { SessionRouter } from '../core/session-router.ts'
import type { SessionLeases } from './types.ts'
import { BusReplySchema, BusRequestSchema, INSTANCE_LINK_VERSION } from '../../generated/instances/forward.gen.ts'

const stops: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, debug() {}, info() {}, error() {}, warn: (msg: string) => void warnings.push(msg) }
}

async function privateRedis(): Promise<{ url: string; connect(): Promise<RedisClientType> }> {
  const redis = await startRedis()
  stops.push(() => redis.stop())
  return {
    url: redis.url,
    connect: async () => {
      const c: RedisClientType = createClient({ url: redis.url })
      c.on('error', () => {})
      await c.connect()
      stops.push(() => c.destroy())
      return c
    },
  }
}

/** Leases under which instance `owner` holds every session (this one never does). */
const heldBy = (instanceId: string, owner: string): SessionLeases => ({
  instanceId,
  ttlMs: 5000,
  renewMs: 1500,
  claim: () => Promise.resolve({ kind: 'other', owner }),
  holds: () => false,
  owner: () => Promise.resolve(owner),
  instanceAlive: () => Promise.resolve(true),
  release: () => Promise.resolve(),
  using: (_id, fn) => fn(),
  setHooks: () => {},
})

/** The router of instance `instanceId` over a real bus, every session held by `owner`. */
function routerOn(
  url: string,
  client: RedisClientType,
  instanceId: string,
  owner: string,
  logger: Logger,
): SessionRouter {
  return new SessionRouter({
    manager: { get: () => Promise.reject(new Error('not here')), takeOver: () => Promise.resolve() },
    leases: heldBy(instanceId, owner),
    logger,
    connect: (handle) => {
      const bus = new RedisBus({ instanceId, logger, client, reader: () => createClient({ url }), handle })
      bus.start()
      stops.push(() => bus.close())
      return bus
    },
  })
}

describe('forwarding through Redis', () => {
  it('runs a request on the owner and answers it; drops what is not a message of the link', async () => {
    const redis = await startRedis()
    stops.push(() => redis.stop())
    const connect = async (): Promise<RedisClientType> => {
      const c: RedisClientType = createClient({ url: redis.url })
      c.on('error', () => {})
      await c.connect()
      stops.push(() => c.destroy())
      return c
    }
    const ownerLog = recordingLogger()
    const seen: unknown[] = []
    const owner = new RedisBus({
      instanceId: 'owner-1',
      logger: ownerLog,
      client: await connect(),
      reader: () => createClient({ url: redis.url }),
      handle: (payload) => {
        seen.push(payload)
        return Promise.resolve({ ok: { echoed: payload } })
      },
    })
    const sender = new RedisBus({
      instanceId: 'sender-1',
      logger: recordingLogger(),
      client: await connect(),
      reader: () => createClient({ url: redis.url }),
      handle: () => Promise.resolve({ unsupported: 'these' }),
    })
    owner.start()
    sender.start()
    stops.push(
      () => owner.close(),
      () => sender.close(),
    )

    const raw = await connect()
    const inbox = instanceKeys('owner-1').inbox
    expect(inbox).toBe('chimera:i:{owner-1}:inbox')
    for (const text of [
      'not json',
      'null',
      '{"t":"req","id":"x","from":"sender-1"}',
      '{"t":"req","id":"x","from":"sender-1","v":1,"payload":{"body":1}}',
      '{"t":"what","id":"x","from":"sender-1","payload":{"kind":"session","body":{}}}',
    ])
      await raw.rPush(inbox, text)

    const opts = {
      ownerAlive: () => Promise.resolve(true),
      ownerRunning: () => Promise.resolve(true),
      timeoutMs: 10_000,
      pollMs: 50,
    }
    const command = { kind: 'session', body: { op: 'cancel', id: 'otter-1' } }
    const res = await sender.request('owner-1', command, opts)
    expect(res).toEqual({ kind: 'reply', payload: { ok: { echoed: command } } })
    // A request whose envelope can be read is handed on (its command is the router's to refuse,
    // which answers it); the four other texts were dropped, each said.
    expect(seen).toEqual([{ body: 1 }, command])
    expect(ownerLog.warnings).toHaveLength(4)
    expect(ownerLog.warnings.every((w) => w.includes('not a request or a reply'))).toBe(true)
    expect(await raw.lLen(inbox)).toBe(0)
  })

  it('refuses a request of another version of the link (or of none): nothing runs, the sender is told', async () => {
    const redis = await privateRedis()
    const ownerLog = recordingLogger()
    const seen: unknown[] = []
    const owner = new RedisBus({
      instanceId: 'owner-2',
      logger: ownerLog,
      client: await redis.connect(),
      reader: () => createClient({ url: redis.url }),
      handle: (payload) => (seen.push(payload), Promise.resolve({ ok: true })),
    })
    owner.start()
    stops.push(() => owner.close())
    const raw = await redis.connect()
    const command = { kind: 'session', body: { op: 'cancel', id: 'otter-1' } }
    // An instance from before versions (no `v`), one of a later version, and one of this version.
    await raw.rPush(
      instanceKeys('owner-2').inbox,
      [
        { t: 'req', id: 'r0', from: 'old-1', payload: command },
        { t: 'req', id: 'r2', from: 'new-1', v: INSTANCE_LINK_VERSION + 1, payload: command },
        { t: 'req', id: 'r1', from: 'same-1', v: INSTANCE_LINK_VERSION, payload: command },
      ].map((m) => JSON.stringify(m)),
    )
    const replyTo = async (instance: string): Promise<unknown> => {
      const got = await raw.blPop(instanceKeys(instance).replies, 5)
      return got && (JSON.parse(got.element) as unknown)
    }
    const refused = { incompatible: true }
    expect(await replyTo('old-1')).toEqual({
      t: 'rep',
      id: 'r0',
      from: 'owner-2',
      v: INSTANCE_LINK_VERSION,
      payload: refused,
    })
    expect(await replyTo('new-1')).toEqual({
      t: 'rep',
      id: 'r2',
      from: 'owner-2',
      v: INSTANCE_LINK_VERSION,
      payload: refused,
    })
    expect(await replyTo('same-1')).toEqual({
      t: 'rep',
      id: 'r1',
      from: 'owner-2',
      v: INSTANCE_LINK_VERSION,
      payload: { ok: true },
    })
    // Only the request of this version ran; each refusal was logged.
    expect(seen).toEqual([command])
    expect(ownerLog.warnings).toEqual([
      'forwarding: refused a request of another version of the instance link',
      'forwarding: refused a request of another version of the instance link',
    ])

    // The other way round: this instance's request refused by an owner of a later version is an
    // error for the client naming the owner and both versions; nothing ran.
    const senderLog = recordingLogger()
    const router = routerOn(redis.url, raw, 'sender-2', 'later-1', senderLog)
    const later = (async () => {
      const got = await raw
        .duplicate()
        .connect()
        .then(async (c) => {
          stops.push(() => c.destroy())
          return c.blPop(instanceKeys('later-1').inbox, 5)
        })
      const req = BusRequestSchema.parse(JSON.parse(got!.element))
      expect(req.v).toBe(INSTANCE_LINK_VERSION)
      const reply = { t: 'rep', id: req.id, from: 'later-1', v: INSTANCE_LINK_VERSION + 1, payload: refused }
      await raw.rPush(instanceKeys('sender-2').replies, JSON.stringify(BusReplySchema.parse(reply)))
    })()
    later.catch(() => {}) // awaited below
    const err = await router.cancel('otter-1').catch((e: unknown) => e)
    await later
    expect(ChimeraError.is(err, 'store_unavailable')).toBe(true)
    expect((err as Error).message).toBe(
      `session otter-1 is running on instance later-1, which runs an incompatible version (instance link version ${INSTANCE_LINK_VERSION + 1}; this instance speaks ${INSTANCE_LINK_VERSION}): nothing was run; retry once that instance has let the session go (idle) or been upgraded`,
    )
  })

  it("rejects an answer whose `ok` is not its operation's result: an error for the client, a warning, never the value", async () => {
    const redis = await privateRedis()
    const raw = await redis.connect()
    const log = recordingLogger()
    const router = routerOn(redis.url, raw, 'sender-3', 'owner-3', log)
    // A fake owner on the real lists: answers each request with the next `ok`.
    const answers: unknown[] = [
      { model: 'm', mode: 'build' },
      { model: 'm' },
      'yes',
      { status: 'idle', model: 'm', mode: 'build', lastSeq: 3, summary: { session_id: 'otter-1' } },
      { status: 'asleep', model: 'm', mode: 'build', lastSeq: 3, summary: { session_id: 'otter-1' } },
    ]
    const reader = await redis.connect()
    const owner = (async () => {
      for (const ok of answers) {
        const got = await reader.blPop(instanceKeys('owner-3').inbox, 5)
        const req = BusRequestSchema.parse(JSON.parse(got!.element))
        const reply = { t: 'rep', id: req.id, from: 'owner-3', v: INSTANCE_LINK_VERSION, payload: { ok } }
        await raw.rPush(instanceKeys('sender-3').replies, JSON.stringify(reply))
      }
    })()
    owner.catch(() => {}) // awaited below; a failure before then leaves no unhandled rejection
    expect(await router.setModel('otter-1', 'm')).toEqual({ model: 'm', mode: 'build' })
    const unreadable = (e: unknown): boolean =>
      ChimeraError.is(e, 'store_unavailable') &&
      /answered this [a-z ]+ with a result this instance cannot read \(this [a-z ]+ ran there\)/.test(e.message)
    await expect(router.setMode('otter-1', 'build')).rejects.toSatisfy(unreadable)
    await expect(router.cancel('otter-1')).rejects.toSatisfy(unreadable)
    expect(await router.read('otter-1', false)).toMatchObject({ status: 'idle', lastSeq: 3 })
    await expect(router.read('otter-1', false)).rejects.toSatisfy(
      (e) => ChimeraError.is(e, 'store_unavailable') && /answered this read with a result/.test((e as Error).message),
    )
    await owner
    expect(log.warnings).toHaveLength(3)
    expect(log.warnings[0]).toBe(
      'forwarding: instance owner-3 answered this mode change on session otter-1 with a result that is not a mode result',
    )
  })
})
