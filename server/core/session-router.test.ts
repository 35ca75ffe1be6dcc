/**
 * The one routing path of session commands (session-router.ts), between two managers whose
 * forwarding channel is joined in memory (the payloads go through JSON, as through Redis): a
 * prompt, a cancel and a permission reply sent where the session does not run are run by the
 * owner and answered as if local (the outcome, `false` for nothing to cancel or a request not
 * pending, the owner's own error); an owner that took a command and stopped is reported as such
 * (it may or may not have taken effect); one that never took it loses it to the next claim.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChimeraError } from '../errors.ts'
import type { BusResult } from '../store/redis-bus.ts'
import type { LeaseClaim, SessionLeases } from '../store/types.ts'
import { testEnv, waitForType, within, type TestEnv } from './fixtures/harness.ts'
import type { SessionManager } from './manager.ts'
import type { Forwarder } from './session-router.ts'
import { SessionOpSchema } from '../../generated/instances/forward.gen.ts'
import { APPROVAL_POLICIES } from './approval-policies.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-router-')
})
afterEach(async () => {
  await env.cleanup()
})

/** Leases whose claims answer `claim` (in order, the last one repeated). */
function leases(instanceId: string, ...claims: LeaseClaim[]): SessionLeases {
  const queue = [...claims]
  return {
    instanceId,
    ttlMs: 5000,
    renewMs: 1500,
    claim: () => Promise.resolve(queue.length > 1 ? queue.shift()! : queue[0]!),
    holds: () => claims.every((c) => c.kind === 'mine'),
    owner: () => Promise.resolve('owner'),
    instanceAlive: () => Promise.resolve(true),
    release: () => Promise.resolve(),
    using: (_id, fn) => fn(),
    setHooks: () => {},
  }
}

const mine: LeaseClaim = { kind: 'mine', fresh: false, length: 0 }
const other: LeaseClaim = { kind: 'other', owner: 'owner' }

/** An owner (holds every session) and a receiver (another instance runs every session), joined in memory. */
function pair(ownerClaims: LeaseClaim[] = [mine]) {
  let serve: ((payload: unknown) => Promise<unknown>) | undefined
  const sent: { payload: unknown; timeoutMs: number }[] = []
  const owner = env.manager({
    approval: 'ask',
    leases: leases('owner', ...ownerClaims),
    forward: (handle) => ((serve = handle), { request: () => Promise.reject(new Error('the owner sends nothing')) }),
  })
  const receiver = env.manager({
    leases: leases('receiver', other),
    forward: () => ({
      request: async (_target, payload, opts): Promise<BusResult> => {
        sent.push({ payload, timeoutMs: opts.timeoutMs })
        const reply = await serve!(JSON.parse(JSON.stringify(payload)))
        return { kind: 'reply', payload: JSON.parse(JSON.stringify(reply)) }
      },
    }),
  })
  return { owner, receiver, sent }
}

describe('a session command where the session does not run', () => {
  it('a prompt runs on the owner; the receiver gets its outcome and last seq, waiting as long as the turn', async () => {
    const { owner, receiver, sent } = pair()
    const s = await owner.create()
    const { messageId, done } = receiver.router.prompt(s.id, '!say hello from the owner')
    const r = await within(done, 5000, 'the forwarded prompt')
    expect(r.outcome).toMatchObject({ stop_reason: 'end_turn', success: true, output: 'hello from the owner' })
    expect(r.lastSeq).toBe(s.lastSeq)
    // The user message carries the receiver's message id (its client knows its own prompt).
    const user = (await s.events()).find((e) => e.type === 'user_message')
    expect(user?.data).toMatchObject({ message_id: messageId })
    expect(sent).toHaveLength(1)
    expect(sent[0]!.timeoutMs).toBe(Infinity)
  })

  it("a cancel and a permission reply run on the owner (first answer wins); an unknown session is the owner's error", async () => {
    const { owner, receiver } = pair()
    const s = await owner.create()
    const asked = s.prompt('!call Write {"path":"x.txt","content":"x"}')
    const req = await waitForType(s, 'permission_request')
    expect(await receiver.router.replyPermission(s.id, 'no-such-request', 'allow', 'acp')).toBe(false)
    expect(await receiver.router.replyPermission(s.id, req.data.request_id, 'deny', 'acp')).toBe(true)
    expect(await receiver.router.replyPermission(s.id, req.data.request_id, 'allow', 'acp')).toBe(false)
    await within(asked.done, 5000, 'the answered turn')
    const long = s.prompt('!say started\n!sleep 600000')
    await waitForType(s, 'text_delta')
    expect(await receiver.router.cancel(s.id)).toBe(true)
    expect((await within(long.done, 5000, 'the cancelled turn')).stop_reason).toBe('cancelled')
    expect(await receiver.router.cancel(s.id)).toBe(false)
    const missing = receiver.router.cancel('otter-00000000000000000000000000')
    await expect(missing).rejects.toSatisfy((e) => ChimeraError.is(e, 'session_not_found'))
  })

  it("a steer, a compaction and model, mode and approval changes act on the owner's session", async () => {
    const { owner, receiver, sent } = pair()
    const s = await owner.create()
    const local = await receiver.get(s.id)
    expect(await receiver.router.steer(s.id, 'too early')).toBe(false)
    const model = s.model
    expect(await receiver.router.setModel(s.id, model)).toEqual({ model, mode: s.mode })
    const unknown = await receiver.router.setModel(s.id, 'no-such-model').catch((e: unknown) => e)
    expect(ChimeraError.is(unknown) && unknown.message).toMatch(/no-such-model/)
    expect(await receiver.router.setMode(s.id, 'plan')).toEqual({ model, mode: 'plan' })
    expect(s.mode).toBe('plan')
    expect((await s.events()).at(-1)).toMatchObject({ type: 'mode_changed', data: { new: 'plan' } })
    const before = s.approval
    expect(await receiver.router.setApproval(s.id, 'deny')).toEqual({ old: before, new: 'deny' })
    expect(s.approval).toBe('deny')
    // The receiver's own copy was not the one changed.
    expect(local).not.toBe(s)
    expect(local.mode).not.toBe('plan')
    await within(s.prompt('!say one').done, 5000, 'a first turn')
    const compaction = await receiver.router.compact(s.id)
    expect(compaction.type).toBe('compaction')
    expect((await s.events()).at(-1)).toMatchObject({ type: 'compaction', seq: compaction.seq })
    const long = s.prompt('!say started\n!sleep 600000')
    await waitForType(s, 'text_delta')
    expect(await receiver.router.steer(s.id, 'steered from the receiver')).toBe(true)
    s.cancel()
    await within(long.done, 5000, 'the cancelled turn')
    expect(sent.map((x) => (x.payload as { body: { op: string } }).body.op)).toEqual([
      'steer',
      'model',
      'model',
      'mode',
      'approval',
      'compact',
      'steer',
    ])
    await expect(receiver.router.setMode(s.id, 'no-such-mode')).rejects.toSatisfy((e) => ChimeraError.is(e))
  })

  it("a read answers the owner's copy (status, history, last seq, summary), not the receiver's stale one", async () => {
    const { owner, receiver, sent } = pair()
    const s = await owner.create()
    const local = await receiver.get(s.id)
    await within(s.prompt('!say said on the owner').done, 5000, 'a turn on the owner')
    const long = s.prompt('!say started\n!sleep 600000')
    await waitForType(s, 'text_delta')
    const r = await receiver.router.read(s.id, true)
    expect(r.status).toBe('running')
    expect(r.lastSeq).toBe(s.lastSeq)
    expect(r.model).toBe(s.model)
    expect(r.summary).toMatchObject({ session_id: s.id, status: 'running' })
    expect(JSON.stringify(r.messages)).toContain('said on the owner')
    expect(r.messages).toEqual(JSON.parse(JSON.stringify(s.messages())))
    // The receiver's own copy had not seen the owner's turns.
    expect(local.lastSeq).toBeLessThan(s.lastSeq)
    expect(JSON.stringify(local.messages())).not.toContain('said on the owner')
    // Without the history: nothing of it travels.
    const bare = await receiver.router.read(s.id, false)
    expect(bare.messages).toBeUndefined()
    expect(bare.status).toBe('running')
    s.cancel()
    await within(long.done, 5000, 'the cancelled turn')
    expect(sent.map((x) => (x.payload as { body: { op: string } }).body)).toEqual([
      { op: 'state', id: s.id, messages: true },
      { op: 'state', id: s.id, messages: false },
    ])
    const missing = receiver.router.read('otter-00000000000000000000000000', false)
    await expect(missing).rejects.toSatisfy((e) => ChimeraError.is(e, 'session_not_found'))
  })

  it('a read claims no lease: with no holder it answers from this instance, with one it is forwarded', async () => {
    const claims: string[] = []
    const free: SessionLeases = {
      ...leases('reader', mine),
      holds: () => false,
      owner: () => Promise.resolve(undefined),
      claim: (id) => (claims.push(id), Promise.resolve(mine)),
    }
    const reader = env.manager({ leases: free, forward: () => ({ request: () => Promise.reject(new Error('no')) }) })
    const s = await reader.create()
    claims.length = 0
    const r = await reader.router.read(s.id, false)
    expect(r).toMatchObject({ status: 'idle', lastSeq: s.lastSeq, model: s.model })
    expect(claims).toEqual([])
    // Held elsewhere: forwarded, still no claim (the pair's receiver claims nothing either way).
    const { owner, receiver, sent } = pair()
    const held = await owner.create()
    expect((await receiver.router.read(held.id, false)).status).toBe('idle')
    expect(sent).toHaveLength(1)
  })

  it("an approval change travels with any of the core's policies and nothing else", () => {
    for (const value of APPROVAL_POLICIES)
      expect(SessionOpSchema.safeParse({ op: 'approval', id: 'otter-1', value }).success, value).toBe(true)
    expect(SessionOpSchema.safeParse({ op: 'approval', id: 'otter-1', value: 'sometimes' }).success).toBe(false)
  })

  it('an owner that no longer holds the session sends the command back to be routed again (bounded)', async () => {
    const { owner, receiver, sent } = pair([other])
    const s = await owner.create()
    await expect(receiver.router.cancel(s.id)).rejects.toThrow(/changed hands 4 times/)
    expect(sent).toHaveLength(4)
  })
})

describe('an owner that fails', () => {
  function receiverWith(results: BusResult[], ...claims: LeaseClaim[]): SessionManager {
    const forwarder: Forwarder = { request: () => Promise.resolve(results.shift()!) }
    return env.manager({ leases: leases('receiver', ...claims), forward: () => forwarder })
  }

  it('took the prompt and stopped: the client is told it may or may not have run', async () => {
    const m = receiverWith([{ kind: 'lost' }], other)
    const err = await m.router.prompt('otter-00000000000000000000000000', '!say x').done.catch((e: unknown) => e)
    expect(ChimeraError.is(err, 'store_unavailable')).toBe(true)
    expect((err as Error).message).toMatch(/stopped while handling this prompt \(it may or may not have taken effect\)/)
  })

  it('never took it (withdrawn): the next claim runs it here', async () => {
    const m = receiverWith([{ kind: 'withdrawn' }], other, mine)
    const s = await m.create()
    const r = await within(m.router.prompt(s.id, '!say ran here').done, 5000, 'the prompt run here')
    expect(r.outcome.output).toBe('ran here')
  })

  it('serves no handler of the kind (an HTTP request sent to an ACP-only instance): said so, not retried', async () => {
    let serve: ((payload: unknown) => Promise<unknown>) | undefined
    env.manager({
      leases: leases('owner', mine),
      forward: (h) => ((serve = h), { request: () => Promise.reject(new Error('the owner sends nothing')) }),
    })
    const reply = await serve!({ kind: 'http', body: {} })
    expect(reply).toEqual({ unsupported: 'http' })
    const m = receiverWith([{ kind: 'reply', payload: reply }], other)
    const routed = m.router.route('otter-00000000000000000000000000', {
      local: () => Promise.resolve('here'),
      payload: () => m.router.envelope('http', {}),
      answer: () => 'answered',
    })
    await expect(routed).rejects.toThrow(/does not serve http commands/)
  })

  it('speaks another version of the instance link: nothing ran, the client is told which instance and versions', async () => {
    const m = receiverWith([{ kind: 'incompatible', version: 7 }], other)
    const err = await m.router.steer('otter-00000000000000000000000000', 'x').catch((e: unknown) => e)
    expect(ChimeraError.is(err, 'store_unavailable')).toBe(true)
    expect((err as Error).message).toMatch(
      /running on instance owner, which runs an incompatible version \(instance link version 7; this instance speaks 1\): nothing was run/,
    )
  })

  it("answers a result that is not its operation's: an error, not the value", async () => {
    const m = receiverWith([{ kind: 'reply', payload: { ok: { outcome: 'done', lastSeq: 1 } } }], other)
    const err = await m.router.prompt('otter-00000000000000000000000000', 'x').done.catch((e: unknown) => e)
    expect(ChimeraError.is(err, 'store_unavailable')).toBe(true)
    expect((err as Error).message).toMatch(/answered this prompt with a result this instance cannot read/)
  })
})
