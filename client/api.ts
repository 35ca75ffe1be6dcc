/**
 * The typed API client: one method per operation of specs/openapi/chimera.openapi.yaml, grouped
 * by the operationId's resource (`sessions.create` → `client.sessions.create`). Methods resolve
 * to the success body typed from the generated `paths`, reject with ChimeraApiError (carrying
 * the spec's ErrorBody) on an error status, and take `{signal, token}` on every call: `signal`
 * aborts the request (the promise rejects with the signal's reason, as fetch does) and `token`
 * overrides the client's bearer token (a per-session token for the `/session/{id}` routes).
 * `client.raw` is the underlying openapi-fetch client for status-level control.
 *
 * @example
 * const client = createChimeraClient({ baseUrl: 'http://127.0.0.1:5173', token })
 * const { session_id } = await client.sessions.create({ prompt: 'list files' })
 * for await (const ev of client.sessions.events(session_id)) if (ev.type === 'text_delta') show(ev.metadata.text)
 */
import type { HttpOperationId } from '../generated/http/routes.gen.ts'
import { ChimeraApiError } from './errors.ts'
import type { ReconnectOptions } from './events/event-stream.ts'
import {
  openLoopEvents,
  openSessionEvents,
  type LoopEventStream,
  type SessionEventStream,
  type StreamOptions,
} from './events/session-events.ts'
import { createHttpClient, type HttpClient, type paths } from './http.ts'

export interface ChimeraClientOptions {
  /** Server origin, e.g. `http://127.0.0.1:5173` (a path prefix is kept). */
  baseUrl: string
  /** Master or per-session bearer token (none when undefined, e.g. an unset environment variable). */
  token?: string | undefined
  /** Custom fetch; resolved on every call, so interceptors installed later (msw) apply. */
  fetch?: (req: Request) => Promise<Response>
  /** Reconnection defaults for event streams. */
  reconnect?: ReconnectOptions
}

/** Options every call takes. */
export interface CallOptions {
  signal?: AbortSignal | undefined
  /** Bearer token for this call only. */
  token?: string | undefined
}

type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } }
}
  ? B
  : never
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } }
}
  ? B
  : never
type Query<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never

export type HealthResponse = Json<'/health', 'get', 200>
export type InfoResponse = Json<'/info', 'get', 200>
export type ProvidersResponse = Json<'/providers', 'get', 200>
export type ToolsResponse = Json<'/tools', 'get', 200>
export type SessionsListQuery = Query<'/sessions', 'get'>
export type SessionsListResponse = Json<'/sessions', 'get', 200>
export type SessionsCreateRequest = Body<'/sessions', 'post'>
export type SessionRunStarted = Json<'/sessions', 'post', 201>
export type SessionDetail = Json<'/sessions/{id}', 'get', 200>
/** One session's summary (a row of `GET /sessions`; the answer of a rename). */
export type SessionSummary = Json<'/sessions/{id}', 'patch', 200>
export type TranscriptJson = Json<'/sessions/{id}/transcript', 'get', 200>
export type ShareRequest = Body<'/sessions/{id}/share', 'post'>
export type ShareResult = Json<'/sessions/{id}/share', 'post', 200>
export type UndoResult = Json<'/sessions/{id}/undo', 'post', 200>
export type SessionCreateRequest = Body<'/session', 'post'>
export type SessionCreated = Json<'/session', 'post', 201>
export type SessionSnapshot = Json<'/session/{id}', 'get', 200>
export type SessionMessageRequest = Body<'/session/{id}/message', 'post'>
export type MessageAccepted = Json<'/session/{id}/message', 'post', 202>
export type ToolApproveRequest = Body<'/tool/approve', 'post'>
export type CommandsListResponse = Json<'/commands', 'get', 200>
export type CommandInvokeRequest = Body<'/commands/{name}/invoke', 'post'>
export type CommandInvokeAccepted = Json<'/commands/{name}/invoke', 'post', 202>
export type RunsQuery = Query<'/runs', 'get'>
export type RunsListResponse = Json<'/runs', 'get', 200>
export type RunsCostResponse = Json<'/runs/cost', 'get', 200>

/** Which client method serves each spec operation (checked complete by the compiler). */
export const OPERATION_METHODS = {
  'health.get': 'health',
  'healthz.get': 'healthz',
  'info.get': 'info',
  'providers.list': 'providers',
  'tools.list': 'tools',
  'openapi.get': 'openapi',
  'asyncapi.get': 'asyncapi',
  'openrpc.get': 'openrpc',
  'sessions.list': 'sessions.list',
  'sessions.create': 'sessions.create',
  'sessions.get': 'sessions.get',
  'sessions.rename': 'sessions.rename',
  'sessions.addTurn': 'sessions.addTurn',
  'sessions.cancel': 'sessions.cancel',
  'sessions.streamEvents': 'sessions.events',
  'sessions.getTranscript': 'sessions.transcript',
  'sessions.share': 'sessions.share',
  'sessions.undo': 'sessions.undo',
  'sessions.redo': 'sessions.redo',
  'session.list': 'session.list',
  'session.create': 'session.create',
  'session.get': 'session.get',
  'session.delete': 'session.delete',
  'session.sendMessage': 'session.sendMessage',
  'session.cancel': 'session.cancel',
  'session.streamEvents': 'session.events',
  'session.rotateToken': 'session.rotateToken',
  'session.undo': 'session.undo',
  'session.redo': 'session.redo',
  'tool.approve': 'tool.approve',
  'commands.list': 'commands.list',
  'commands.invoke': 'commands.invoke',
  'runs.list': 'runs.list',
  'runs.cost': 'runs.cost',
} as const satisfies Record<HttpOperationId, string>

/** The client: one method per operation (see OPERATION_METHODS), `raw`, and `withToken`. */
export type ChimeraClient = ReturnType<typeof buildClient> & {
  /** A client with the same options and another bearer token (e.g. a session's own token). */
  withToken(token: string | undefined): ChimeraClient
}

interface Outcome<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The success body, or ChimeraApiError with the ErrorBody. */
async function ok<T>(operation: string, p: Promise<Outcome<T>>): Promise<Exclude<T, undefined>> {
  const { data, error, response } = await p
  if (!response.ok) throw new ChimeraApiError(response.status, error, operation)
  return data as Exclude<T, undefined>
}

async function noContent(operation: string, p: Promise<Outcome<unknown>>): Promise<void> {
  await ok(operation, p)
}

export function createChimeraClient(opts: ChimeraClientOptions): ChimeraClient {
  return Object.assign(buildClient(opts), {
    withToken: (token: string | undefined) => createChimeraClient({ ...opts, token }),
  })
}

function buildClient(opts: ChimeraClientOptions) {
  const raw: HttpClient = createHttpClient({ baseUrl: opts.baseUrl, token: opts.token, fetch: opts.fetch })
  const base = opts.baseUrl.replace(/\/+$/, '')
  const init = (o: CallOptions = {}) => ({
    signal: o.signal,
    ...(o.token !== undefined ? { headers: { authorization: `Bearer ${o.token}` } } : {}),
  })
  const id = (sid: string) => ({ params: { path: { id: sid } } })
  const stream = <O extends { token?: string; reconnect?: ReconnectOptions }>(o: O) => ({
    ...o,
    baseUrl: base,
    token: o.token ?? opts.token,
    fetch: opts.fetch,
    reconnect: o.reconnect ?? opts.reconnect,
  })

  return {
    /** The openapi-fetch client: `{data, error, response}` per call, for status-level control. */
    raw,

    health: (o?: CallOptions) => ok('GET /health', raw.GET('/health', init(o))),
    healthz: (o?: CallOptions) => ok('GET /healthz', raw.GET('/healthz', init(o))),
    info: (o?: CallOptions) => ok('GET /info', raw.GET('/info', init(o))),
    providers: (o?: CallOptions) => ok('GET /providers', raw.GET('/providers', init(o))),
    tools: (o?: CallOptions) => ok('GET /tools', raw.GET('/tools', init(o))),
    openapi: (o?: CallOptions) => ok('GET /openapi.json', raw.GET('/openapi.json', init(o))),
    /** The AsyncAPI document of the event streams. */
    asyncapi: (o?: CallOptions) => ok('GET /asyncapi.json', raw.GET('/asyncapi.json', init(o))),
    /** The OpenRPC document of the ACP surface: the v1 wire (default) or the seed dialect. */
    openrpc: (dialect: 'v1' | 'seed' = 'v1', o?: CallOptions) =>
      ok('GET /openrpc.json', raw.GET('/openrpc.json', { ...init(o), params: { query: { dialect } } })),

    sessions: {
      list: (query: SessionsListQuery = {}, o?: CallOptions) =>
        ok('GET /sessions', raw.GET('/sessions', { ...init(o), params: { query } })),
      create: (body: SessionsCreateRequest, o?: CallOptions) =>
        ok('POST /sessions', raw.POST('/sessions', { ...init(o), body })),
      get: (sid: string, o?: CallOptions) =>
        ok('GET /sessions/{id}', raw.GET('/sessions/{id}', { ...init(o), ...id(sid) })),
      /** Set the session's title (trimmed, at most 200 characters); `null` or `''` clears it. Resolves to the summary. */
      rename: (sid: string, title: string | null, o?: CallOptions) =>
        ok('PATCH /sessions/{id}', raw.PATCH('/sessions/{id}', { ...init(o), ...id(sid), body: { title } })),
      addTurn: (sid: string, prompt: string, o?: CallOptions) =>
        ok('POST /sessions/{id}/turns', raw.POST('/sessions/{id}/turns', { ...init(o), ...id(sid), body: { prompt } })),
      cancel: (sid: string, o?: CallOptions) =>
        noContent('POST /sessions/{id}/cancel', raw.POST('/sessions/{id}/cancel', { ...init(o), ...id(sid) })),
      /** The session's events (replay, then live) until `end`; see SessionEventStream. */
      events: (sid: string, o: StreamOptions = {}): SessionEventStream => openSessionEvents(sid, stream(o)),
      /** The HTML or Markdown rendering as text. */
      transcript: (sid: string, format: 'html' | 'md' = 'html', o?: CallOptions) =>
        ok(
          'GET /sessions/{id}/transcript',
          raw.GET('/sessions/{id}/transcript', {
            ...init(o),
            params: { path: { id: sid }, query: { format } },
            parseAs: 'text',
          }),
        ) as Promise<string>,
      /** The JSON rendering. */
      transcriptJson: (sid: string, o?: CallOptions) =>
        ok(
          'GET /sessions/{id}/transcript',
          raw.GET('/sessions/{id}/transcript', {
            ...init(o),
            params: { path: { id: sid }, query: { format: 'json' } },
          }),
        ) as Promise<TranscriptJson>,
      share: (sid: string, body: ShareRequest, o?: CallOptions) =>
        ok('POST /sessions/{id}/share', raw.POST('/sessions/{id}/share', { ...init(o), ...id(sid), body })),
      undo: (sid: string, steps = 1, o?: CallOptions) =>
        ok('POST /sessions/{id}/undo', raw.POST('/sessions/{id}/undo', { ...init(o), ...id(sid), body: { steps } })),
      redo: (sid: string, steps = 1, o?: CallOptions) =>
        ok('POST /sessions/{id}/redo', raw.POST('/sessions/{id}/redo', { ...init(o), ...id(sid), body: { steps } })),
    },

    session: {
      list: (o?: CallOptions) => ok('GET /session', raw.GET('/session', init(o))),
      create: (body: SessionCreateRequest = {}, o?: CallOptions) =>
        ok('POST /session', raw.POST('/session', { ...init(o), body })),
      get: (sid: string, o?: CallOptions) =>
        ok('GET /session/{id}', raw.GET('/session/{id}', { ...init(o), ...id(sid) })),
      delete: (sid: string, o?: CallOptions) =>
        noContent('DELETE /session/{id}', raw.DELETE('/session/{id}', { ...init(o), ...id(sid) })),
      sendMessage: (sid: string, message: string, o?: CallOptions) =>
        ok(
          'POST /session/{id}/message',
          raw.POST('/session/{id}/message', { ...init(o), ...id(sid), body: { message } }),
        ),
      cancel: (sid: string, o?: CallOptions) =>
        noContent('POST /session/{id}/cancel', raw.POST('/session/{id}/cancel', { ...init(o), ...id(sid) })),
      /** The session's replay buffer, then live frames across turns (it never ends by itself). */
      events: (sid: string, o: Omit<StreamOptions, 'from'> & { from?: number } = {}): LoopEventStream =>
        openLoopEvents(sid, stream(o)),
      rotateToken: (sid: string, o?: CallOptions) =>
        ok('POST /session/{id}/rotate-token', raw.POST('/session/{id}/rotate-token', { ...init(o), ...id(sid) })),
      undo: (sid: string, steps = 1, o?: CallOptions) =>
        ok('POST /session/{id}/undo', raw.POST('/session/{id}/undo', { ...init(o), ...id(sid), body: { steps } })),
      redo: (sid: string, steps = 1, o?: CallOptions) =>
        ok('POST /session/{id}/redo', raw.POST('/session/{id}/redo', { ...init(o), ...id(sid), body: { steps } })),
    },

    tool: {
      approve: (body: ToolApproveRequest, o?: CallOptions) =>
        ok('POST /tool/approve', raw.POST('/tool/approve', { ...init(o), body })),
    },

    commands: {
      list: (o?: CallOptions) => ok('GET /commands', raw.GET('/commands', init(o))),
      invoke: (name: string, body: CommandInvokeRequest, o?: CallOptions) =>
        ok(
          'POST /commands/{name}/invoke',
          raw.POST('/commands/{name}/invoke', { ...init(o), params: { path: { name } }, body }),
        ),
    },

    runs: {
      list: (query: RunsQuery = {}, o?: CallOptions) =>
        ok('GET /runs', raw.GET('/runs', { ...init(o), params: { query } })),
      cost: (query: RunsQuery = {}, o?: CallOptions) =>
        ok('GET /runs/cost', raw.GET('/runs/cost', { ...init(o), params: { query } })),
    },
  }
}
