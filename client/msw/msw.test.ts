/**
 * The msw mock driving the typed client: every operation of the spec is called through the
 * client (the test fails if one is missed), every body and SSE record the handlers return is
 * checked by the conformance sniffers, event streams replay the recorded transcript with real
 * `id:` lines and resume from `Last-Event-ID`, and the bearer tiers behave as the spec says.
 */
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { sniffingFetch, type SniffingFetch } from '../../conformance/harness/sniffing-fetch.ts'
import { httpOperations, type HttpOperationId } from '../../generated/http/routes.gen.ts'
import { createChimeraClient, OPERATION_METHODS, type ChimeraClient } from '../api.ts'
import { ChimeraApiError } from '../errors.ts'
import { answerPermission, continueSession, followTurn, renameSession, startSession } from '../helpers.ts'
import type { SessionStreamEvent } from '../events/session-events.ts'
import { createChimeraMock, parseSseRecording, sampleTranscript, type ChimeraMock } from './index.ts'

const BASE = 'http://chimera.test'
const TOKEN = 'master-token'
let mock: ChimeraMock
const server = setupServer()
let sniff: SniffingFetch
let client: ChimeraClient

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => {
  expect(sniff.violations()).toEqual([])
  server.resetHandlers()
})
afterAll(() => server.close())

function fresh(opts: Parameters<typeof createChimeraMock>[0] = {}): void {
  mock = createChimeraMock({ baseUrl: BASE, token: TOKEN, retryMs: 5, ...opts })
  server.use(...mock.handlers)
  sniff = sniffingFetch()
  // The client resolves fetch per call, so msw's interception (installed by listen) applies.
  client = createChimeraClient({ baseUrl: BASE, token: TOKEN, fetch: sniff.fetch })
}

async function drain<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

describe('msw handlers driving the client', () => {
  it('a sample front-end flow: start a session, stream it to the end, read the text, the tool card and the diff', async () => {
    fresh()
    const { session_id } = await client.sessions.create({ prompt: 'write hello.txt' })
    const stream = client.sessions.events(session_id)
    let text = ''
    const cards: string[] = []
    let diff = ''
    for await (const ev of stream) {
      if (ev.type === 'text_delta') text += ev.metadata.text
      if (ev.type === 'tool_call') cards.push(`${ev.metadata.tool} ${JSON.stringify(ev.metadata.args)}`)
      if (ev.type === 'file_edit') diff = ev.metadata.diff
    }
    expect(text).toContain('I will write <b>hello.txt</b> & check it.')
    expect(cards).toEqual(['Write {"path":"hello.txt","content":"hello <world>\\n"}'])
    expect(diff).toContain('+hello <world>')
    expect(stream.end).toEqual({ session_id, success: true })
    // Real `id:` lines: the counter of each event, 1..N, the same as the recording's seq.
    expect(sniff.records.filter((r) => r.event !== 'end').map((r) => Number(r.id))).toEqual(
      sampleTranscript.map((e) => e.seq),
    )
  })

  it('streams resume with Last-Event-ID, and from=live waits for the next turn', async () => {
    fresh()
    const { session_id } = await client.sessions.create({ prompt: 'first' })
    const tail = await drain(client.sessions.events(session_id, { from: 20 }))
    expect(tail.map((e) => e.seq)).toEqual([21, 22])
    const live = client.sessions.events(session_id, { from: 'live' })
    const got = drain(live)
    await client.sessions.addTurn(session_id, 'second')
    const events: SessionStreamEvent[] = await got
    expect(events[0]).toMatchObject({ seq: 23, type: 'user_message', metadata: { text: 'second' } })
    expect(events.at(-1)?.type).toBe('agent_result')
  })

  it('the singular family: per-session token, live loop events across turns, delete ends the stream', async () => {
    fresh()
    const created = await client.session.create({ working_dir: '/repo' })
    const mine = client.withToken(created.session_token)
    const ctl = new AbortController()
    const seen: string[] = []
    const reading = (async () => {
      for await (const ev of mine.session.events(created.session_id, {
        signal: ctl.signal,
        reconnect: { maxAttempts: 0 },
      })) {
        seen.push(`${ev.seq}:${ev.event}:${ev.type}`)
        if (ev.type === 'agent_result') ctl.abort()
      }
    })()
    const { message_id } = await mine.session.sendMessage(created.session_id, 'hi there')
    await reading
    expect(seen[0]).toBe('1:user_message:user_message')
    expect(seen.at(-1)).toBe(`${sampleTranscript.length}:result:agent_result`)
    expect(seen.filter((s) => s.includes(':loop_event:')).length).toBe(sampleTranscript.length - 2)
    expect(message_id).toMatch(/^msg-/)
    const snapshot = await mine.session.get(created.session_id)
    expect(snapshot).toMatchObject({
      session_id: created.session_id,
      working_dir: '/repo',
      event_count: sampleTranscript.length,
      status: 'idle',
    })
    expect(snapshot.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    // A session token may not rotate tokens; the master may.
    await expect(mine.session.rotateToken(created.session_id)).rejects.toSatisfy(
      (e) => ChimeraApiError.is(e, 'admin_only') && (e as ChimeraApiError).status === 403,
    )
    const { session_token } = await client.session.rotateToken(created.session_id)
    expect(session_token).not.toBe(created.session_token)
    await expect(mine.session.get(created.session_id)).rejects.toSatisfy((e) => ChimeraApiError.is(e, 'unauthorized'))
    // Another session's token is 401 on this session's routes; a session token on a master-only route is 403.
    const other = await client.session.create()
    await expect(client.withToken(other.session_token).session.get(created.session_id)).rejects.toSatisfy(
      (e) => ChimeraApiError.is(e, 'unauthorized') && (e as ChimeraApiError).status === 401,
    )
    await expect(client.withToken(session_token).sessions.get(created.session_id)).rejects.toSatisfy((e) =>
      ChimeraApiError.is(e, 'admin_only'),
    )
    await expect(client.withToken(session_token).info()).rejects.toSatisfy((e) => ChimeraApiError.is(e, 'admin_only'))
    // Deleting the session ends a stream that is open on it with `end`, success false.
    const open = client.withToken(session_token).session.events(created.session_id, { from: sampleTranscript.length })
    const tail = drain(open)
    await vi.waitFor(() => expect(mock.state.sessions.get(created.session_id)!.listeners.size).toBe(1))
    await client.withToken(session_token).session.delete(created.session_id)
    expect(await tail).toEqual([])
    expect(open.end).toEqual({ session_id: created.session_id, success: false })
    await expect(client.session.get(created.session_id)).rejects.toSatisfy(
      (e) => ChimeraApiError.is(e, 'session_not_found') && (e as ChimeraApiError).status === 404,
    )
  })

  it('typed errors carry the ErrorBody: unauthorized, invalid_body, invalid_query, nothing_to_undo, request_not_found, command_not_found', async () => {
    fresh()
    const anon = client.withToken(undefined)
    await expect(anon.info()).rejects.toSatisfy(
      (e) =>
        ChimeraApiError.is(e, 'unauthorized') &&
        (e as ChimeraApiError).body?.message === 'missing or invalid bearer token',
    )
    await expect(anon.health()).resolves.toMatchObject({ status: 'ok' })
    sniff.expectInvalidRequest()
    await expect(client.sessions.create({ prompt: '' })).rejects.toSatisfy(
      (e) => ChimeraApiError.is(e, 'invalid_body') && (e as ChimeraApiError).status === 400,
    )
    await expect(client.runs.list({ limit: 0 })).rejects.toSatisfy((e) => ChimeraApiError.is(e, 'invalid_query'))
    const created = await client.session.create()
    await expect(client.session.undo(created.session_id)).rejects.toSatisfy(
      (e) => ChimeraApiError.is(e, 'nothing_to_undo') && (e as ChimeraApiError).status === 409,
    )
    await expect(
      client.tool.approve({ session_id: created.session_id, request_id: 'perm-x', decision: 'allow' }),
    ).rejects.toSatisfy((e) => ChimeraApiError.is(e, 'request_not_found'))
    await expect(client.commands.invoke('nope', { session_id: created.session_id })).rejects.toSatisfy(
      (e) => ChimeraApiError.is(e, 'command_not_found') && (e as ChimeraApiError).body?.name === 'nope',
    )
    await expect(client.sessions.get('otter-missing')).rejects.toSatisfy((e) =>
      ChimeraApiError.is(e, 'session_not_found'),
    )
  })

  it('renameSession sets, trims and clears the title every listing shows, records session_renamed, and refuses a long title', async () => {
    fresh()
    const { session_id } = await client.sessions.create({ prompt: 'a very long first prompt' })
    await expect(renameSession(client, session_id, '  Login bug  ')).resolves.toMatchObject({
      session_id,
      title: 'Login bug',
    })
    expect((await client.sessions.get(session_id)).summary.title).toBe('Login bug')
    expect((await client.sessions.list()).sessions.find((s) => s.session_id === session_id)?.title).toBe('Login bug')
    expect(mock.state.sessions.get(session_id)!.events.at(-1)).toMatchObject({
      type: 'session_renamed',
      data: { title: 'Login bug' },
    })
    sniff.expectInvalidRequest()
    await expect(renameSession(client, session_id, 'x'.repeat(201))).rejects.toSatisfy(
      (e) => ChimeraApiError.is(e, 'invalid_body') && (e as ChimeraApiError).status === 400,
    )
    await expect(renameSession(client, 'otter-20260101T000000Z-00000000', 'x')).rejects.toSatisfy((e) =>
      ChimeraApiError.is(e, 'session_not_found'),
    )
    const cleared = await renameSession(client, session_id, '   ')
    expect(cleared).not.toHaveProperty('title')
    expect((await client.sessions.get(session_id)).summary).not.toHaveProperty('title')
  })

  it('an abort signal cancels a call', async () => {
    fresh()
    const ctl = new AbortController()
    ctl.abort(new Error('user left'))
    await expect(client.info({ signal: ctl.signal })).rejects.toThrow('user left')
  })

  it('every operation is mocked, reachable through its client method, and answers spec-valid bodies', async () => {
    fresh()
    const { session_id } = await client.sessions.create({ prompt: 'go', model: 'offline' })
    const created = await client.session.create({ working_dir: '/w' })
    const sid = created.session_id
    // A turn that waits for permission: its request is pending until answered.
    mock.state.append(
      mock.state.sessions.get(sid)!,
      'permission_request',
      { request_id: 'perm-9', call_id: 'call-9', tool: 'Write', args: { path: 'a' }, options: ['allow', 'deny'] },
      0,
    )
    const calls: Record<HttpOperationId, () => Promise<unknown>> = {
      'health.get': () => client.health(),
      'healthz.get': () => client.healthz(),
      'info.get': () => client.info(),
      'providers.list': () => client.providers(),
      'tools.list': () => client.tools(),
      'openapi.get': () => client.openapi(),
      'asyncapi.get': () => client.asyncapi(),
      'openrpc.get': async () => [await client.openrpc(), await client.openrpc('seed')],
      'sessions.list': () => client.sessions.list({ limit: 5 }),
      'sessions.create': () => client.sessions.create({ prompt: 'again' }),
      'sessions.get': () => client.sessions.get(session_id),
      'sessions.rename': () => client.sessions.rename(session_id, 'Renamed'),
      'sessions.addTurn': () => client.sessions.addTurn(session_id, 'more'),
      'sessions.cancel': () => client.sessions.cancel(session_id),
      'sessions.streamEvents': () => drain(client.sessions.events(session_id)),
      'sessions.getTranscript': async () => [
        await client.sessions.transcript(session_id, 'html'),
        await client.sessions.transcript(session_id, 'md'),
        await client.sessions.transcriptJson(session_id),
      ],
      'sessions.share': () => client.sessions.share(session_id, { sink: 'stdout', format: 'json' }),
      'sessions.undo': () => client.sessions.undo(session_id),
      'sessions.redo': () => client.sessions.redo(session_id),
      'session.list': () => client.session.list(),
      'session.create': () => client.session.create(),
      'session.get': () => client.session.get(sid),
      'session.delete': async () => client.session.delete((await client.session.create()).session_id),
      'session.sendMessage': () => client.session.sendMessage(sid, 'hello'),
      'session.cancel': () => client.session.cancel(sid),
      'session.streamEvents': async () => {
        const ctl = new AbortController()
        for await (const ev of client.session.events(sid, { signal: ctl.signal })) if (ev.seq >= 3) ctl.abort()
      },
      'session.rotateToken': () => client.session.rotateToken(sid),
      'session.undo': () => client.session.undo(sid),
      'session.redo': () => client.session.redo(sid),
      'tool.approve': () => client.tool.approve({ session_id: sid, request_id: 'perm-9', decision: 'allow' }),
      'commands.list': () => client.commands.list(),
      'commands.invoke': () =>
        client.commands.invoke('summarize', { session_id: sid, args: ['chapter-7'], kwargs: { TARGET: 'the REPL' } }),
      'runs.list': () => client.runs.list({ since: '7d' }),
      'runs.cost': () => client.runs.cost({ model: 'offline', limit: 10 }),
    }
    for (const [opId, call] of Object.entries(calls)) {
      const before = sniff.seen.length
      await call()
      expect(sniff.seen.slice(before), `${opId} goes through ${OPERATION_METHODS[opId as HttpOperationId]}`).toContain(
        opId,
      )
    }
    expect(new Set(sniff.seen)).toEqual(new Set(Object.keys(httpOperations)))
    expect(
      (
        await client.commands.invoke('summarize', {
          session_id: sid,
          args: ['chapter-7'],
          kwargs: { target: 'the REPL' },
        })
      ).rendered,
    ).toBe('Summarize chapter-7 about the REPL')
  })

  it('replays a stream body saved as text (what `curl -N …/events > s.sse` records)', async () => {
    fresh()
    const { session_id } = await client.sessions.create({ prompt: 'saved' })
    const res = await fetch(`${BASE}/sessions/${session_id}/events`, { headers: { authorization: `Bearer ${TOKEN}` } })
    const text = await res.text()
    const recording = parseSseRecording(text)
    expect(recording.map((e) => e.seq)).toEqual(sampleTranscript.map((e) => e.seq))
    fresh({ transcript: recording })
    const again = await drain(client.sessions.events((await client.sessions.create({ prompt: 'replayed' })).session_id))
    expect(again.map((e) => e.type)).toEqual(sampleTranscript.map((e) => e.type))
    expect(() => parseSseRecording('event: text_delta\ndata: {"nope":1}\n\n')).toThrow(/without a counter id/)
    expect(() => parseSseRecording('id: 1\nevent: text_delta\ndata: {"nope":1}\n\n')).toThrow(/record 1:/)
  })

  it('replays a recording the user made with the client (the events a stream yielded)', async () => {
    fresh()
    const { session_id } = await client.sessions.create({ prompt: 'record me' })
    const recording = await drain(client.sessions.events(session_id))
    fresh({ transcript: recording })
    const replay = await client.sessions.create({ prompt: 'replayed' })
    const again = await drain(client.sessions.events(replay.session_id))
    expect(again.map((e) => e.type)).toEqual(recording.map((e) => e.type))
    expect(again[0]).toMatchObject({ type: 'user_message', metadata: { text: 'replayed' } })
  })
})

describe('the high-level helpers over a mock that asks for permission', () => {
  it('startSession follows the turn to its end, answering the permission request through the callback', async () => {
    fresh({ askPermissions: true })
    const asked: string[] = []
    const run = await startSession(
      client,
      { prompt: 'write hello.txt' },
      { onPermission: (req) => (asked.push(`${req.metadata.tool} ${req.metadata.args.path}`), 'allow') },
    )
    expect(asked).toEqual(['Write hello.txt'])
    expect(run.success).toBe(true)
    expect(run.output).toBe('Write ok: Created hello.txt (14 bytes)')
    expect(run.events.map((e) => e.type)).toEqual(sampleTranscript.map((e) => e.type))
    expect(run.events.find((e) => e.type === 'permission_reply')?.metadata).toMatchObject({
      decision: 'allow',
      source: 'http',
    })
    // The next turn starts after this one: only its own events come back.
    const next = await continueSession(client, run.session_id, 'again', { onPermission: () => 'deny' })
    expect(next.events[0]).toMatchObject({
      seq: sampleTranscript.length + 1,
      type: 'user_message',
      metadata: { text: 'again' },
    })
    expect(next.events.filter((e) => e.type === 'file_edit')).toEqual([])
    expect(next.events.find((e) => e.type === 'tool_result')?.metadata).toMatchObject({
      ok: false,
      error: 'the user denied Write',
    })
    expect(next.success).toBe(true)
  })

  it('a turn held at a permission request waits for an answer from anywhere, and cancel ends it', async () => {
    fresh({ askPermissions: true })
    const { session_id } = await client.sessions.create({ prompt: 'write' })
    const seen: string[] = []
    const following = followTurn(client, session_id, 0, { onEvent: (e) => seen.push(e.type) })
    await vi.waitFor(() => expect(seen.at(-1)).toBe('permission_request'))
    await client.sessions.cancel(session_id)
    const run = await following
    expect(run.success).toBe(false)
    expect(seen.slice(-2)).toEqual(['permission_reply', 'cancelled'])
    expect(run.events.at(-2)?.metadata).toMatchObject({ decision: 'cancelled' })
    await expect(answerPermission(client, session_id, 'perm-gone', 'allow')).rejects.toSatisfy((e) =>
      ChimeraApiError.is(e, 'request_not_found'),
    )
  })
})
