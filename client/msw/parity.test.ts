/**
 * The msw mock and the server cannot disagree about a request: the same valid and invalid
 * requests go to the real server (in process) and to the mock (through msw), each with its own
 * session and token where the request names one, and every answer's status and error code (the
 * ErrorBody's `error`, and `Allow` / `WWW-Authenticate` where sent) must match. Both run the
 * operation pipeline of client/wire/http/pipeline.ts.
 */
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessTarget, type ServerTarget } from '../../conformance/harness/targets.ts'
import { createChimeraMock } from './index.ts'

const TOKEN = 'parity-master-token'
const MOCK_BASE = 'http://chimera.test'

interface Side {
  fetch(req: Request): Promise<Response>
  base: string
  sid: string
  sessionToken: string
}

/** A request, with `{sid}` for the side's own session id and `{stok}` / `{master}` for its tokens. */
interface Case {
  name: string
  method: string
  path: string
  auth?: string
  type?: string
  body?: string
}

const json = (v: unknown): string => JSON.stringify(v)
const CASES: Case[] = [
  { name: 'open health probe', method: 'GET', path: '/health' },
  { name: 'no token', method: 'GET', path: '/sessions' },
  { name: 'a wrong token', method: 'GET', path: '/sessions', auth: 'Bearer nope' },
  { name: 'two Authorization values', method: 'GET', path: '/sessions', auth: 'Bearer a, Bearer b' },
  { name: 'a session token on a master route', method: 'GET', path: '/sessions', auth: 'Bearer {stok}' },
  { name: "a session token on its own session's route", method: 'GET', path: '/session/{sid}', auth: 'Bearer {stok}' },
  {
    name: 'a session token on a master-only {id} route',
    method: 'GET',
    path: '/sessions/{sid}',
    auth: 'Bearer {stok}',
  },
  {
    name: 'numeric-looking text in a string filter (limit=5&model=4)',
    method: 'GET',
    path: '/sessions?limit=5&model=4',
  },
  { name: 'a limit that is not a number', method: 'GET', path: '/sessions?limit=abc' },
  { name: 'a malformed since', method: 'GET', path: '/sessions?since=banana' },
  { name: 'a good since', method: 'GET', path: '/runs/cost?since=7d' },
  { name: 'runs with a limit', method: 'GET', path: '/runs?limit=2' },
  { name: 'an unknown transcript format', method: 'GET', path: '/sessions/{sid}/transcript?format=pdf' },
  { name: 'an existing session', method: 'GET', path: '/sessions/{sid}' },
  { name: 'an id no session can have', method: 'GET', path: '/sessions/not%20an%20id' },
  { name: 'a malformed escape in the id', method: 'GET', path: '/session/%E0%A4%A' },
  { name: 'a well-formed id of no session', method: 'GET', path: '/session/no-such-session' },
  { name: 'a method the route does not allow', method: 'DELETE', path: '/sessions' },
  { name: 'rename without a body', method: 'PATCH', path: '/sessions/{sid}' },
  { name: 'rename with a text body', method: 'PATCH', path: '/sessions/{sid}', type: 'text/plain', body: 'x' },
  { name: 'rename with broken JSON', method: 'PATCH', path: '/sessions/{sid}', body: '{"title":' },
  { name: 'rename with a wrong type', method: 'PATCH', path: '/sessions/{sid}', body: json({ title: 5 }) },
  { name: 'a valid rename', method: 'PATCH', path: '/sessions/{sid}', body: json({ title: 'parity' }) },
  { name: 'create without a prompt', method: 'POST', path: '/sessions', body: json({}) },
  { name: 'invoke without a session_id', method: 'POST', path: '/commands/summarize/invoke', body: json({}) },
  {
    name: 'invoke with args not a list',
    method: 'POST',
    path: '/commands/summarize/invoke',
    body: json({ session_id: '{sid}', args: 'x' }),
  },
  {
    name: 'invoke with an impossible session_id',
    method: 'POST',
    path: '/commands/summarize/invoke',
    body: json({ session_id: 'bad id!' }),
  },
  {
    name: 'approve with an impossible session_id',
    method: 'POST',
    path: '/tool/approve',
    body: json({ session_id: 'bad id!', request_id: 'r', decision: 'allow' }),
  },
  { name: 'undo with a bad step count', method: 'POST', path: '/session/{sid}/undo', body: json({ steps: 'two' }) },
  { name: 'a message with an unknown field', method: 'POST', path: '/session/{sid}/message', body: json({ nope: 1 }) },
]

const fill = (s: string, side: Side): string => s.replaceAll('{sid}', side.sid).replaceAll('{stok}', side.sessionToken)

async function answer(side: Side, c: Case): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { authorization: fill(c.auth ?? `Bearer ${TOKEN}`, side) }
  if (c.name === 'no token') delete headers.authorization
  if (c.body !== undefined) headers['content-type'] = c.type ?? 'application/json'
  const res = await side.fetch(
    new Request(`${side.base}${fill(c.path, side)}`, {
      method: c.method,
      headers,
      body: c.body === undefined ? undefined : fill(c.body, side),
    }),
  )
  const text = await res.text()
  const error = res.status >= 400 ? (JSON.parse(text) as { error?: unknown }).error : undefined
  return {
    status: res.status,
    ...(error !== undefined ? { error } : {}),
    ...(res.headers.has('allow') ? { allow: res.headers.get('allow') } : {}),
    ...(res.headers.has('www-authenticate') ? { authenticate: res.headers.get('www-authenticate') } : {}),
  }
}

async function openSession(side: Omit<Side, 'sid' | 'sessionToken'>): Promise<Side> {
  const res = await side.fetch(
    new Request(`${side.base}/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    }),
  )
  expect(res.status).toBe(201)
  const body = (await res.json()) as { session_id: string; session_token: string }
  return { ...side, sid: body.session_id, sessionToken: body.session_token }
}

const msw = setupServer(...createChimeraMock({ baseUrl: MOCK_BASE, token: TOKEN }).handlers)
let target: ServerTarget
let server: Side
let mock: Side

beforeAll(async () => {
  msw.listen({ onUnhandledRequest: 'error' })
  target = inProcessTarget({ token: TOKEN })
  server = await openSession({ fetch: (r) => target.fetch(r), base: target.baseUrl })
  mock = await openSession({ fetch: (r) => fetch(r), base: MOCK_BASE })
})
afterAll(async () => {
  msw.close()
  await target.close()
})

describe('the msw mock answers every request as the server does', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const [fromServer, fromMock] = [await answer(server, c), await answer(mock, c)]
    expect(fromMock).toEqual(fromServer)
  })

  it('the comparison can fail: the case list holds both successes and errors', async () => {
    const statuses = await Promise.all(CASES.map(async (c) => (await answer(server, c)).status as number))
    expect(statuses.some((s) => s < 300)).toBe(true)
    expect(new Set(statuses.filter((s) => s >= 400)).size).toBeGreaterThan(4)
  })
})
