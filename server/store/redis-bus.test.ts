/**
 * The forwarding link between instances (redis-bus.ts) on a private Redis, as
 * specs/asyncapi/instances.asyncapi.yaml describes it: a request pushed to the owner's inbox is
 * run by the owner and answered on the requester's reply list; what is not a request or a reply
 * of that document (not JSON, `null`, a request without a payload, an unknown `t`) is dropped
 * with a warning, and the owner goes on serving the next request.
 */
import { createClient, type RedisClientType } from '@redis/client'
import { afterEach, describe, expect, it } from 'vitest'
import type { Logger } from '../log.ts'
import { startRedis } from './fixtures/redis-server.ts'
import { RedisBus } from './redis-bus.ts'
import { instanceKeys } from './redis-shared.ts'

const stops: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, debug() {}, info() {}, error() {}, warn: (msg: string) => void warnings.push(msg) }
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
      '{"t":"req","id":"x","from":"sender-1","payload":{"body":1}}',
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
})
