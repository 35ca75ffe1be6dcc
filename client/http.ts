/**
 * The typed HTTP client: openapi-fetch over the `paths` types generated from
 * specs/openapi/chimera.openapi.yaml. Every call returns `{ data, error, response }` typed by
 * operation and status.
 *
 * @example
 * const api = createHttpClient({ baseUrl: 'http://127.0.0.1:5173', token: process.env.OTTER_SERVER_TOKEN })
 * const { data } = await api.GET('/health')
 */
import createClient, { type Client } from 'openapi-fetch'
import type { paths } from '../generated/http/openapi.gen.d.ts'

export type { paths }
export type HttpClient = Client<paths>

export interface HttpClientOptions {
  baseUrl: string
  /** Master or per-session bearer token. */
  token?: string
  /** Custom fetch (e.g. an in-process app's `fetch`); resolved per call, so test interceptors apply. */
  fetch?: (req: Request) => Promise<Response>
}

export function createHttpClient(opts: HttpClientOptions): HttpClient {
  return createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/$/, ''),
    headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
    fetch: opts.fetch ?? ((req: Request) => globalThis.fetch(req)),
  })
}
