/**
 * msw 2.x request handlers for every operation of specs/openapi/chimera.openapi.yaml: each request
 * goes through the server's own operation pipeline (client/wire/http/pipeline.ts — route
 * matching, the bearer tiers when given a token, path/query/body validation with the generated
 * validators, the same error codes and bodies), then the operation's mock answers from MockState
 * with spec-valid bodies. `OPERATIONS` below is typed over every operationId, so a new operation
 * in the spec fails the type check until it has a mock.
 */
import { http, type RequestHandler } from 'msw'
import openapiDocument from '../../generated/http/openapi.bundle.json' with { type: 'json' }
import { endsTurn } from '../../generated/event-facts.gen.ts'
import type { HttpOperationId, OperationInput } from '../../generated/http/routes.gen.ts'
import type { ChimeraEvent, ErrorCode } from '../../generated/schemas.gen.ts'
import { sseChannels } from '../../generated/sse/events.gen.ts'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import { authorizeTiers, type TokenCheck } from '../wire/http/auth.ts'
import { HttpError, errorBody } from '../wire/http/errors.ts'
import { decodeParams, matchRoute, operationFor, runOperation } from '../wire/http/pipeline.ts'
import { MockState, toSseEnvelope, type MockSession } from './state.ts'
import { pluralStream, singularStream } from './sse.ts'

/** What a mock handler gets: the operation's validated input (typed from the generated validators) and the mock's state. */
export type MockContext<K extends HttpOperationId = HttpOperationId> = Omit<OperationInput<K>, 'path'> & {
  /** The path parameters as validated, and raw (the mock answers an unknown id itself). */
  path: OperationInput<K>['path'] & Record<string, string>
  /** The session named by the `id` path parameter, when the route has one. */
  session: MockSession | undefined
  state: MockState
  retryMs: number
}
type MockHandlers = { [K in HttpOperationId]: (ctx: MockContext<K>) => Response | Promise<Response> }
/** The dispatcher's erased view: input was validated against the operation's own schemas first. */
type ErasedMockHandler = (
  ctx: Omit<MockContext, 'body' | 'query' | 'path'> & { body: unknown; query: unknown; path: Record<string, string> },
) => Response | Promise<Response>

const VERSION = '0.1.0'
const STARTED_AT = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
const MODEL = 'offline'

export const json = (status: number, body: unknown): Response =>
  new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: status === 204 ? {} : { 'content-type': 'application/json' },
  })
export const fail = (
  status: number,
  error: ErrorCode,
  message?: string,
  extra: Record<string, unknown> = {},
): Response => json(status, { error, ...(message ? { message } : {}), ...extra })

const need = (s: MockSession | undefined): MockSession => s! // routes with an `id` resolve the session before the handler runs

function summary(s: MockSession) {
  const result = [...s.events].reverse().find((e) => e.type === 'agent_result')
  const steps = s.events.filter((e) => e.type === 'step_start').length
  const toolCalls = s.events.filter((e) => e.type === 'tool_call').length
  const last = s.events.at(-1)
  const title = titleOf(s)
  return {
    session_id: s.id,
    started_at: s.events[0]?.ts ?? new Date(s.createdAt * 1000).toISOString(),
    ended_at: result ? result.ts : null,
    model: s.model,
    prompt: s.prompt,
    ...(title !== null ? { title } : {}),
    success: result ? (result.data as { success: boolean }).success : null,
    cost_usd: 0,
    steps,
    tool_calls: toolCalls,
    working_dir: s.workingDir,
    created_at: s.createdAt,
    last_touched: s.lastTouched,
    event_count: s.events.length,
    status: last && !endsTurn(last.type) ? ('running' as const) : ('idle' as const),
  }
}

/** The title the latest `session_renamed` event set (null: none, or cleared). */
function titleOf(s: MockSession): string | null {
  const e = [...s.events].reverse().find((x) => x.type === 'session_renamed')
  return e ? (e.data as { title: string | null }).title : null
}

/** `PATCH /sessions/{id}` as the server answers it: whitespace runs to one space, trimmed, at most 200 characters, blank clears; recorded as an event. */
function rename(st: MockState, s: MockSession, raw: string | null): Response {
  const title = raw?.replace(/\s+/g, ' ').trim() || null
  if (title !== null && title.length > 200)
    return fail(400, 'invalid_body', `title: at most 200 characters once trimmed (got ${title.length})`)
  if (title !== titleOf(s)) st.append(s, 'session_renamed', { title })
  return json(200, summary(s))
}

function undoRedo(st: MockState, s: MockSession, kind: 'undo' | 'redo', steps: number): Response {
  const available = kind === 'undo' ? s.turns - s.undone : s.undone
  if (available <= 0) return fail(409, kind === 'undo' ? 'nothing_to_undo' : 'nothing_to_redo')
  const turns = Math.min(steps, available)
  s.undone += kind === 'undo' ? turns : -turns
  const remaining = kind === 'undo' ? s.turns - s.undone : s.undone
  const files = s.events.filter((e) => e.type === 'file_edit').length > 0 ? 1 : 0
  const message = `/${kind}: ${kind === 'undo' ? 'rewound' : 'replayed'} ${turns} turn${turns === 1 ? '' : 's'}, ${files} file${files === 1 ? '' : 's'} restored (${remaining} remaining)`
  st.append(s, kind, { turns, files_restored: files, remaining, output: message })
  return json(200, { message, turns, files_restored: files, remaining })
}

const escapeHtml = (t: string): string => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function transcriptOf(s: MockSession, format: 'html' | 'md' | 'json'): Response {
  const text = (e: ChimeraEvent): string =>
    e.type === 'user_message'
      ? `**user:** ${(e.data as { text: string }).text}`
      : e.type === 'agent_result'
        ? `**assistant:** ${(e.data as { output: string }).output}`
        : ''
  const lines = s.events.map(text).filter(Boolean)
  if (format === 'json') return json(200, { session_id: s.id, events: s.events })
  if (format === 'md')
    return new Response(`# ${s.id}\n\n${lines.join('\n\n')}\n`, {
      status: 200,
      headers: { 'content-type': 'text/markdown; charset=utf-8' },
    })
  return new Response(
    `<!doctype html><title>${escapeHtml(s.id)}</title>${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('')}`,
    { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } },
  )
}

const COMMANDS = [
  {
    name: 'summarize',
    description: 'Summarize $1 about $TARGET',
    args: [{ name: 'target', description: 'subject of the summary' }],
    source: '/workspace/.opencode/command/summarize.md',
  },
]

function runRows(st: MockState) {
  return [...st.sessions.values()]
    .map((s) => summary(s))
    .filter((r) => r.started_at)
    .map((r) => ({
      run_id: r.session_id,
      started_at: r.started_at,
      ended_at: r.ended_at,
      model: r.model,
      prompt: r.prompt,
      success: r.success,
      cost_usd: 0,
      steps: r.steps,
      tool_calls: r.tool_calls,
      source: 'otter' as const,
    }))
    .reverse()
}

/** The mock of each operation. */
export const OPERATIONS = {
  'health.get': () => json(200, { status: 'ok', version: VERSION, started_at: STARTED_AT }),
  'healthz.get': () => json(200, { status: 'ok', version: VERSION, started_at: STARTED_AT }),
  'info.get': () =>
    json(200, {
      version: VERSION,
      model: MODEL,
      provider: 'offline',
      tools: Object.keys(toolSpecs),
      cwd: '/workspace',
    }),
  'providers.list': () =>
    json(200, {
      active: { provider: 'offline', model: MODEL },
      available: [
        { name: 'offline', configured: true },
        { name: 'anthropic', configured: false },
        { name: 'openai', configured: false },
      ],
    }),
  'tools.list': () =>
    json(200, {
      tools: Object.entries(toolSpecs).map(([name, t]) => ({
        name,
        description: t.description,
        input_schema: t.inputSchema,
      })),
    }),
  'openapi.get': () => json(200, openapiDocument),
  // Stand-ins: the server serves the full bundled documents; a mock only names what it mocks.
  'asyncapi.get': () =>
    json(200, {
      asyncapi: '3.0.0',
      info: { title: 'Chimera session event streams (SSE), mocked', version: VERSION },
      channels: Object.fromEntries(
        Object.entries(sseChannels).map(([name, c]) => [
          name,
          { address: c.address, messages: Object.fromEntries(Object.keys(c.events).map((e) => [e, { name: e }])) },
        ]),
      ),
    }),
  'openrpc.get': ({ query }) =>
    json(200, {
      openrpc: '1.3.2',
      info: { title: `Chimera ACP (${query.dialect === 'seed' ? 'seed' : 'v1'} dialect), mocked`, version: VERSION },
      methods: [],
    }),

  'sessions.list': ({ state, query }) => {
    const rows = [...state.sessions.values()].reverse().map((s) => summary(s))
    return json(200, {
      sessions: rows.filter((r) => !query.model || r.model === query.model).slice(0, Number(query.limit ?? 20)),
    })
  },
  'sessions.create': ({ state, body }) => {
    const s = state.create({ prompt: body.prompt, model: body.model, workingDir: body.cwd })
    return json(201, { session_id: s.id, status: 'running' })
  },
  'sessions.get': ({ session }) =>
    json(200, { session_id: need(session).id, summary: summary(need(session)), events: need(session).events }),
  'sessions.rename': ({ state, session, body }) => rename(state, need(session), body.title),
  'sessions.addTurn': ({ state, session, body }) => {
    state.runTurn(need(session), body.prompt)
    return json(202, { session_id: need(session).id, status: 'running' })
  },
  'sessions.cancel': ({ state, session }) => {
    state.cancel(need(session))
    return json(204, null)
  },
  'sessions.streamEvents': ({ session, req, retryMs }) => pluralStream(need(session), req, retryMs),
  'sessions.getTranscript': ({ session, query }) =>
    transcriptOf(need(session), (query.format as 'html' | 'md' | 'json' | undefined) ?? 'html'),
  'sessions.share': ({ session, body }) => {
    const format = body.format ?? 'html'
    if (body.sink === 'stdout')
      return json(200, { sink: 'stdout', format, body: JSON.stringify(need(session).events.map(toSseEnvelope)) })
    if (body.sink === 'file')
      return json(200, { sink: 'file', format, path: `/workspace/.chimera/shares/${need(session).id}.${format}` })
    if (!body.url) return fail(400, 'invalid_body', 'the http sink needs `url` (or $OTTER_SHARE_URL)')
    return json(200, { sink: 'http', format, url: body.url, status_code: 200, reply: { ok: true } })
  },
  'sessions.undo': ({ state, session, body }) => undoRedo(state, need(session), 'undo', body?.steps ?? 1),
  'sessions.redo': ({ state, session, body }) => undoRedo(state, need(session), 'redo', body?.steps ?? 1),

  'session.list': ({ state }) => json(200, [...state.sessions.keys()]),
  'session.create': ({ state, body }) => {
    const s = state.create({ model: body?.model, workingDir: body?.working_dir })
    return json(201, { session_id: s.id, working_dir: s.workingDir, created_at: s.createdAt, session_token: s.token })
  },
  'session.get': ({ session }) => {
    const s = need(session)
    const sum = summary(s)
    const messages = s.events.flatMap((e): { role: 'user' | 'assistant'; content: string }[] =>
      e.type === 'user_message'
        ? [{ role: 'user', content: (e.data as { text: string }).text }]
        : e.type === 'agent_result'
          ? [{ role: 'assistant', content: (e.data as { output: string }).output }]
          : [],
    )
    return json(200, {
      session_id: s.id,
      working_dir: s.workingDir,
      created_at: s.createdAt,
      last_touched: s.lastTouched,
      event_count: s.events.length,
      status: sum.status,
      model: s.model,
      messages,
    })
  },
  'session.delete': ({ state, session }) => {
    state.remove(need(session).id)
    return json(204, null)
  },
  'session.sendMessage': ({ state, session, body }) =>
    json(202, { message_id: state.runTurn(need(session), (body.message ?? body.prompt)!) }),
  'session.cancel': ({ state, session }) => {
    state.cancel(need(session))
    return json(204, null)
  },
  'session.streamEvents': ({ state, session, req, retryMs }) => singularStream(state, need(session), req, retryMs),
  'session.rotateToken': ({ session }) => {
    need(session).token = crypto.randomUUID().replaceAll('-', '')
    return json(200, { session_token: need(session).token })
  },
  'session.undo': ({ state, session, body }) => undoRedo(state, need(session), 'undo', body?.steps ?? 1),
  'session.redo': ({ state, session, body }) => undoRedo(state, need(session), 'redo', body?.steps ?? 1),

  'tool.approve': ({ state, body }) => {
    const s = state.sessions.get(body.session_id)
    if (!s) return fail(404, 'session_not_found')
    if (!state.answer(s, body.request_id, body.decision))
      return fail(404, 'request_not_found', `no pending permission request ${JSON.stringify(body.request_id)}`)
    return json(200, { ok: true })
  },
  'commands.list': () => json(200, { commands: COMMANDS }),
  'commands.invoke': ({ state, path, body }) => {
    const s = state.sessions.get(body.session_id)
    if (!s) return fail(404, 'session_not_found')
    const cmd = COMMANDS.find((c) => c.name === path.name)
    if (!cmd) return fail(404, 'command_not_found', undefined, { name: path.name })
    const target = Object.entries(body.kwargs ?? {}).find(([k]) => k.toLowerCase() === 'target')?.[1] ?? '$TARGET'
    const rendered = cmd.description.replace('$1', body.args?.[0] ?? '$1').replace('$TARGET', String(target))
    return json(202, { message_id: state.runTurn(s, rendered), name: cmd.name, rendered })
  },
  'runs.list': ({ state, query }) => {
    const rows = runRows(state).slice(0, query.limit === undefined ? undefined : Number(query.limit))
    return json(200, { total_runs: rows.length, runs: rows })
  },
  'runs.cost': ({ state, query }) => {
    const rows = runRows(state).slice(0, query.limit === undefined ? undefined : Number(query.limit))
    const byModel: Record<string, { runs: number; cost_usd: number; tokens: number }> = {}
    for (const r of rows) byModel[r.model] = { runs: (byModel[r.model]?.runs ?? 0) + 1, cost_usd: 0, tokens: 0 }
    const ok = rows.filter((r) => r.success === true).length
    return json(200, {
      total_runs: rows.length,
      total_cost: 0,
      total_tokens: 0,
      by_model: byModel,
      by_run: rows.map((r) => ({
        run_id: r.run_id,
        started_at: r.started_at,
        model: r.model,
        cost_usd: 0,
        total_tokens: 0,
        input_tokens: 0,
        output_tokens: 0,
        cache_tokens: 0,
        success: r.success,
        steps: r.steps,
        source: r.source,
      })),
      totals: {
        runs: rows.length,
        successful_runs: ok,
        failed_runs: rows.length - ok,
        cost_usd: 0,
        tokens: 0,
        input_tokens: 0,
        output_tokens: 0,
        cache_tokens: 0,
        avg_cost_usd: 0,
        p50_cost_usd: 0,
        p95_cost_usd: 0,
      },
      filters: {
        since: (query.since as string | undefined) ?? null,
        model: (query.model as string | undefined) ?? null,
      },
    })
  },
} satisfies MockHandlers

export interface HandlerOptions {
  baseUrl: string
  token?: string
  retryMs: number
}

/**
 * One msw handler for every route of the spec, running the server's own operation pipeline
 * (client/wire/http/pipeline.ts: route matching, the bearer tiers, the generated validators, the
 * document's body errors, the same error bodies) over the mock's state. A path no route of the
 * spec has is left to msw (`onUnhandledRequest`).
 */
export function buildHandlers(state: MockState, o: HandlerOptions): RequestHandler[] {
  const base = o.baseUrl.replace(/\/+$/, '')
  const prefix = new URL(base).pathname.replace(/\/+$/, '')
  const tokens: TokenCheck = {
    isMaster: o.token === undefined ? undefined : (token) => token === o.token,
    verify: (id, token) => state.sessions.get(id)?.token === token,
    sessionOf: (token) => [...state.sessions.values()].find((s) => s.token === token)?.id,
  }
  const pipeline = {
    authorize: (req: Request, security: readonly string[], id: string | undefined) =>
      authorizeTiers(req, security, id, tokens),
  }
  return [
    // A RegExp, not msw's path pattern: msw decodes pattern parameters itself, and a malformed
    // escape (`/session/%E0%A4%A`) would throw there instead of reaching the pipeline's 404.
    http.all(new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/`), async ({ request }) => {
      const pathname = new URL(request.url).pathname.slice(prefix.length)
      const match = matchRoute(pathname)
      if (!match) return undefined
      try {
        const op = operationFor(match.route, request.method)
        const raw = decodeParams(match.params)
        const handler = OPERATIONS[op.operationId as HttpOperationId] as ErasedMockHandler
        return await runOperation(
          op,
          ({ path, query, body, req }) => {
            // The mock's stand-in for the server's session lookup: an unknown id is 404.
            let session: MockSession | undefined
            if ('id' in raw) {
              session = state.sessions.get(raw.id!)
              if (!session) throw new HttpError('session_not_found', 'unknown session id')
              session.lastTouched = Date.now() / 1000
            }
            return handler({
              req,
              path: { ...raw, ...(path as object) },
              query,
              body,
              session,
              state,
              retryMs: o.retryMs,
            })
          },
          request,
          raw,
          pipeline,
        )
      } catch (err) {
        if (!HttpError.is(err)) throw err
        return new Response(JSON.stringify(errorBody(err)), {
          status: err.status,
          headers: { 'content-type': 'application/json', ...err.headers },
        })
      }
    }),
  ]
}
