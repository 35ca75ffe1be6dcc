/**
 * ACP on any instance (docs/scale-out.md "Any instance serves any session"): an ACP client
 * connected to instance B prompts a session that instance A runs. The prompt is forwarded to A
 * through Redis (core/session-router.ts) and answered as if local: the client sees the turn's
 * updates (B follows the session's events from Redis), is asked the turn's permission request
 * (its answer goes back to A, where the tool runs) and gets the `stopReason` when A's turn ends;
 * `session/cancel`, `session/set_config_option`, `session/set_mode` and `_session/steering` are
 * forwarded too, and `_chimera/session/state` reads A's copy. Over `/acp` (Streamable HTTP, the official SDK's client),
 * over stdio (`otter serve --acp --store redis://…`, the official SDK's client) and on the seed
 * dialect (stdio, plain JSON lines).
 *
 * A holds the session while a turn of its own runs (a sleep sent over HTTP to A): the prompt from
 * B is queued there (seen in Redis's queued-prompt hash), then A's turn is cancelled and B's
 * prompt runs next, on A. The transcripts of what each ACP client saw are printed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import * as acp from '@agentclientprotocol/sdk'
import { createClient, type RedisClientType } from '@redis/client'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { connectRemoteAgent } from '../../client/node/acp-remote.ts'
import { tapAgent } from '../acp/fixtures/v1-frames.ts'
import { startInstances, type Instance, type Instances } from '../store/fixtures/instances.ts'

const clusters: Instances[] = []
const children: ChildProcessWithoutNullStreams[] = []
const dirs: string[] = []
const redisClients: RedisClientType[] = []
afterAll(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const r of redisClients.splice(0)) r.destroy()
  await Promise.all(clusters.map((c) => c.stop()))
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
}, 60_000)

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function redisOf(c: Instances): Promise<RedisClientType> {
  const r: RedisClientType = createClient({ url: c.redis.url })
  await r.connect()
  redisClients.push(r)
  return r
}

/** The instance holding the session's lease (its id, as Redis has it). */
const ownerOf = (r: RedisClientType, id: string): Promise<string | null> => r.get(`chimera:s:{${id}}:owner`)

/** Resolves once the owner has accepted a prompt it has not started (queued behind the running turn). */
/** A gate on Redis's state: checked until `holds` is true of the session's queue length (no fixed wait; bounded). */
async function untilQueued(r: RedisClientType, id: string, holds: (queued: number) => boolean): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!holds(await r.hLen(`chimera:s:{${id}}:queued`))) {
    if (Date.now() > deadline) throw new Error(`session ${id}: its queue never reached the awaited state`)
    await delay(10)
  }
}
const queuedOnOwner = (r: RedisClientType, id: string): Promise<void> => untilQueued(r, id, (n) => n > 0)

/**
 * A session A runs: created on A with a sleeping turn (A holds the lease while it runs). Returns
 * its id, A's instance id, and `release()`, which cancels A's turn (over HTTP, on A) once a
 * prompt from elsewhere is queued behind it, so that prompt runs next, on A.
 */
async function heldByA(a: Instance, r: RedisClientType) {
  const created = await post(`${a.url}/sessions`, { prompt: '!sleep 600000' })
  expect(created.status).toBe(201)
  const { session_id: id } = (await created.json()) as { session_id: string }
  const ownerA = await ownerOf(r, id)
  expect(ownerA).toBeTruthy()
  return {
    id,
    ownerA: ownerA!,
    /**
     * Another sleeping turn on A (A holds the session again), started: it may have been queued
     * behind a turn still ending, and `release()` must find the queue holding only the prompt
     * sent from elsewhere, or its cancel would reach the turn ending and the sleep would run.
     */
    async hold(): Promise<void> {
      expect((await post(`${a.url}/sessions/${id}/turns`, { prompt: '!sleep 600000' })).status).toBe(202)
      await untilQueued(r, id, (n) => n === 0)
    },
    async release(): Promise<void> {
      await queuedOnOwner(r, id)
      expect((await post(`${a.url}/sessions/${id}/cancel`, {})).status).toBe(204)
    },
  }
}

/** One line per thing the client saw (updates, permission requests, answers), for the transcript. */
function transcript() {
  const lines: string[] = []
  const waiters: { text: string; resolve: () => void }[] = []
  const add = (line: string): void => {
    if (process.env.SCALE_ACP_DEBUG) console.error(line)
    lines.push(line)
    for (const w of waiters.splice(0)) (line.includes(w.text) ? w.resolve : () => waiters.push(w))()
  }
  return {
    lines,
    /** Resolves at the next line that contains `text`. */
    next(text: string): Promise<void> {
      return new Promise((resolve) => waiters.push({ text, resolve }))
    },
    update(u: acp.SessionNotification['update']): void {
      if (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text')
        add(`update agent_message_chunk ${JSON.stringify(u.content.text)}`)
      else if (u.sessionUpdate === 'tool_call') add(`update tool_call ${u.title} (${u.status})`)
      else if (u.sessionUpdate === 'tool_call_update')
        add(
          `update tool_call_update ${u.status ?? ''}${u.rawOutput !== undefined ? ` ${JSON.stringify(u.rawOutput).slice(0, 80)}` : ''}`,
        )
      else add(`update ${u.sessionUpdate}`)
    },
    push(line: string): void {
      add(line)
    },
  }
}

/** An SDK client app that records updates and answers a permission request for `marker` (allow once). */
function recordingApp(t: ReturnType<typeof transcript>, onAsk: (p: acp.RequestPermissionRequest) => Promise<void>) {
  return acp
    .client({ name: 'scale-acp-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => t.update(params.update))
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      const cmd = JSON.stringify(params.toolCall.rawInput)
      t.push(`request session/request_permission ${params.toolCall.title} ${cmd}`)
      if (!cmd.includes('ran-on')) {
        // Not this client's prompt's (an earlier turn's, answered elsewhere): held until withdrawn.
        await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r())))
        t.push(`withdrawn session/request_permission ${params.toolCall.title}`)
        return { outcome: { outcome: 'cancelled' } }
      }
      await onAsk(params)
      const optionId = params.options.find((o) => o.kind === 'allow_once')!.optionId
      t.push(`answer ${optionId}`)
      return { outcome: { outcome: 'selected', optionId } }
    })
}

describe('ACP prompts on an instance that does not run the session', () => {
  it('/acp on B: a prompt A runs (its permission asked and answered on B, the tool run on A), then a forwarded cancel', async () => {
    const c = await startInstances(2, { args: ['--approval', 'ask'] })
    clusters.push(c)
    const [a, b] = c.instances as [Instance, Instance]
    const r = await redisOf(c)
    const s = await heldByA(a, r)
    const t = transcript()
    let ownerWhenAsked: string | null = null
    const app = recordingApp(t, async () => {
      ownerWhenAsked = await ownerOf(r, s.id)
    })
    const remote = connectRemoteAgent({ url: b.url, app })
    try {
      await remote.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      })
      await remote.agent.request(acp.methods.agent.session.load, {
        sessionId: s.id,
        cwd: c.workspace,
        mcpServers: [],
      })
      // Settings change on A's copy (B's would be stale, its writes fenced).
      t.push('--- session/set_config_option mode plan, then session/set_mode build (A runs the session)')
      const set = await remote.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: s.id,
        configId: 'mode',
        value: 'plan',
      })
      t.push(`result ${JSON.stringify(set.configOptions.map((o) => [o.id, o.currentValue]))}`)
      expect(set.configOptions.find((o) => o.id === 'mode')).toMatchObject({ currentValue: 'plan' })
      const modeOnA = async (): Promise<unknown> =>
        ((await (await fetch(`${a.url}/session/${s.id}`)).json()) as { mode?: string }).mode
      expect(await modeOnA()).toBe('plan')
      await remote.agent.request(acp.methods.agent.session.setMode, { sessionId: s.id, modeId: 'build' })
      expect(await modeOnA()).toBe('build')
      expect(await ownerOf(r, s.id)).toBe(s.ownerA)

      t.push(`--- session/prompt (A runs the session ${s.ownerA.slice(0, 8)}…)`)
      const prompted = remote.agent.request(acp.methods.agent.session.prompt, {
        sessionId: s.id,
        prompt: [{ type: 'text', text: '!call Bash {"command":"echo ran-on-the-owner"}' }],
      })
      await s.release()
      const result = await prompted
      t.push(`result ${JSON.stringify(result)}`)
      expect(result.stopReason).toBe('end_turn')
      // Asked on B while A held the session: the tool ran on A, its output reached B.
      expect(ownerWhenAsked).toBe(s.ownerA)
      expect(t.lines.some((l) => l.startsWith('request session/request_permission') && l.includes('ran-on'))).toBe(true)
      expect(t.lines.some((l) => l.includes('tool_call_update completed') && l.includes('ran-on-the-owner'))).toBe(true)

      // A read on B answers A's copy: the turn A ran is in the history, the last event is A's.
      await s.hold()
      t.push('--- _chimera/session/state while A runs a turn of its own')
      const state = (await remote.agent.request('_chimera/session/state', { sessionId: s.id })) as {
        status: string
        mode: string
        messages: unknown[]
        lastEventId: number
      }
      t.push(`result status ${state.status}, mode ${state.mode}, ${state.messages.length} messages`)
      expect(state).toMatchObject({ status: 'running', mode: 'build' })
      expect(JSON.stringify(state.messages)).toContain('ran-on-the-owner')
      // The turn just started on A is there too (B's own copy has seen none of it).
      expect(JSON.stringify(state.messages).split('!sleep 600000').length - 1).toBe(2)
      expect(state.lastEventId).toBeGreaterThan(0)
      expect(await ownerOf(r, s.id)).toBe(s.ownerA)
      expect((await post(`${a.url}/sessions/${s.id}/cancel`, {})).status).toBe(204)

      // A forwarded cancel: B's prompt runs on A, B cancels it.
      await s.hold()
      t.push('--- session/prompt, then session/cancel')
      const saidStarted = t.next(' turn started')
      const long = remote.agent.request(acp.methods.agent.session.prompt, {
        sessionId: s.id,
        prompt: [{ type: 'text', text: '!say a long turn started\n!sleep 600000' }],
      })
      await s.release()
      await saidStarted
      expect(await ownerOf(r, s.id)).toBe(s.ownerA)
      t.push('notify session/cancel')
      await remote.agent.notify(acp.methods.agent.session.cancel, { sessionId: s.id })
      const cancelled = await long
      t.push(`result ${JSON.stringify(cancelled)}`)
      expect(cancelled.stopReason).toBe('cancelled')

      // A steer from B reaches A's running turn (its queue entry written on A).
      await s.hold()
      t.push('--- _session/steering while A runs a turn of its own')
      const steered = await remote.agent.request('_session/steering', {
        sessionId: s.id,
        prompt: [{ type: 'text', text: 'steered from B' }],
      })
      t.push(`result ${JSON.stringify(steered)}`)
      expect(steered).toEqual({ outcome: 'injected' })
      expect(await ownerOf(r, s.id)).toBe(s.ownerA)
      expect(await r.hLen(`chimera:s:{${s.id}}:queued`)).toBe(1)
      expect((await post(`${a.url}/sessions/${s.id}/cancel`, {})).status).toBe(204)
    } finally {
      console.log(`ACP over /acp on B, session run by A:\n  ${t.lines.join('\n  ')}`)
      remote.close()
      await remote.closed
    }
  }, 90_000)

  it('stdio on B (otter serve --acp --store redis://…, the SDK client) and the seed dialect: prompts A runs', async () => {
    const c = await startInstances(1, { args: ['--approval', 'ask'] })
    clusters.push(c)
    const [a] = c.instances as [Instance]
    const r = await redisOf(c)
    const stdio = (): ChildProcessWithoutNullStreams => {
      const home = mkdtempSync(join(tmpdir(), 'scale-acp-home-'))
      dirs.push(home)
      const child = spawn(
        process.execPath,
        [CLI_BUNDLE, 'otter', 'serve', '--acp', '--store', c.redis.url, '--cwd', c.workspace],
        { cwd: c.workspace, env: { ...process.env, CHIMERA_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] },
      )
      children.push(child)
      child.stderr.resume()
      return child
    }

    // The official SDK's client over stdio (ACP v1).
    const s = await heldByA(a, r)
    const t = transcript()
    let ownerWhenAsked: string | null = null
    const app = recordingApp(t, async () => {
      ownerWhenAsked = await ownerOf(r, s.id)
    })
    const child = stdio()
    const { stream } = tapAgent(child)
    await app.connectWith(stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      })
      await ctx.request(acp.methods.agent.session.load, { sessionId: s.id, cwd: c.workspace, mcpServers: [] })
      t.push('--- session/prompt over stdio')
      const prompted = ctx.request(acp.methods.agent.session.prompt, {
        sessionId: s.id,
        prompt: [{ type: 'text', text: '!call Bash {"command":"echo ran-on-the-owner-stdio"}' }],
      })
      await s.release()
      const result = await prompted
      t.push(`result ${JSON.stringify(result)}`)
      expect(result.stopReason).toBe('end_turn')
    })
    expect(ownerWhenAsked).toBe(s.ownerA)
    expect(t.lines.some((l) => l.includes('tool_call_update completed') && l.includes('ran-on-the-owner-stdio'))).toBe(
      true,
    )
    child.stdin.end()
    console.log(`ACP v1 over stdio on B, session run by A:\n  ${t.lines.join('\n  ')}`)

    // The seed dialect over stdio: session/message forwarded, its reply the owner's outcome.
    const seed = stdio()
    const out: string[] = []
    const replies = new Map<number, (v: unknown) => void>()
    let buf = ''
    seed.stdout.setEncoding('utf8').on('data', (d: string) => {
      buf += d
      let i: number
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 1)
        out.push(line)
        const msg = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown }
        if (msg.id !== undefined) replies.get(msg.id)?.(msg.result ?? msg.error)
      }
    })
    let next = 1
    const call = (method: string, params: unknown): Promise<unknown> => {
      const id = next++
      seed.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
      return new Promise((resolve) => replies.set(id, resolve))
    }
    await s.hold()
    await call('initialize', { protocolVersion: '0.2' })
    await call('session/load', { sessionId: s.id })
    const message = call('session/message', { sessionId: s.id, prompt: '!say hello from the owner' })
    await s.release()
    const answered = await message
    expect(answered).toMatchObject({ stopReason: 'end_turn', message: { content: { text: 'hello from the owner' } } })
    // session/get reads A's copy while A runs a turn of its own.
    await s.hold()
    const got = (await call('session/get', { sessionId: s.id })) as { status: string; summary: { status: string } }
    expect(got).toMatchObject({ status: 'running', summary: { session_id: s.id, status: 'running' } })
    expect(await ownerOf(r, s.id)).toBe(s.ownerA)
    expect((await post(`${a.url}/sessions/${s.id}/cancel`, {})).status).toBe(204)
    seed.stdin.end()
    const updates = out.filter((l) => l.includes('"session/update"'))
    expect(updates.some((l) => l.includes(' from the owner'))).toBe(true)
    console.log(
      `Seed dialect over stdio on B, session run by A: session/message answered ${JSON.stringify(answered)} after ${updates.length} session/update notifications`,
    )
  }, 90_000)

  it('the owner SIGKILLed while it runs a forwarded prompt: the client is told it may or may not have run; the next prompt runs on B', async () => {
    const c = await startInstances(2, { args: ['--approval', 'ask'], leaseTtlMs: 1000 })
    clusters.push(c)
    const [a, b] = c.instances as [Instance, Instance]
    const r = await redisOf(c)
    const s = await heldByA(a, r)
    const t = transcript()
    const remote = connectRemoteAgent({ url: b.url, app: recordingApp(t, () => Promise.resolve()) })
    try {
      await remote.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      })
      await remote.agent.request(acp.methods.agent.session.load, { sessionId: s.id, cwd: c.workspace, mcpServers: [] })
      t.push('--- session/prompt, then A is SIGKILLed mid-turn')
      const started = t.next(' turn started')
      const long = remote.agent.request(acp.methods.agent.session.prompt, {
        sessionId: s.id,
        prompt: [{ type: 'text', text: '!say a long turn started\n!sleep 600000' }],
      })
      long.catch(() => {})
      await s.release()
      await started
      await a.kill()
      const killedAt = Date.now()
      const err = (await long.then(
        () => undefined,
        (e: unknown) => e,
      )) as { code?: number; message?: string; data?: unknown } | undefined
      const answeredMs = Date.now() - killedAt
      t.push(`error ${JSON.stringify({ code: err?.code, message: err?.message, data: err?.data })}`)
      expect(err?.code).toBe(-32603)
      expect(JSON.stringify(err?.data)).toMatch(
        /stopped while handling this prompt \(it may or may not have taken effect\)/,
      )
      // The next prompt claims the session on B, which first closes the interrupted turn.
      t.push('--- session/prompt again (B claims the session)')
      const next = await remote.agent.request(acp.methods.agent.session.prompt, {
        sessionId: s.id,
        prompt: [{ type: 'text', text: '!say after the failover' }],
      })
      t.push(`result ${JSON.stringify(next)}`)
      expect(next.stopReason).toBe('end_turn')
      expect(t.lines.join('\n')).toContain('" the failover"')
      expect(await ownerOf(r, s.id)).not.toBe(s.ownerA)
      console.log(
        `failover of a forwarded ACP prompt: answered ${answeredMs} ms after the SIGKILL of its owner (lease TTL 1000 ms)`,
      )
    } finally {
      console.log(`ACP over /acp on B, owner A SIGKILLed mid-turn:\n  ${t.lines.join('\n  ')}`)
      remote.close()
      await remote.closed
    }
  }, 90_000)
})
