import { describe, expect, it } from 'vitest'
import { createHttpClient } from './index.ts'
import { inProcessTarget } from '../conformance/harness/targets.ts'

describe('typed HTTP client', () => {
  it('reads /health through the generated types', async () => {
    const target = inProcessTarget({ token: 'tok' })
    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const { data, error, response } = await api.GET('/health')
    expect(error).toBeUndefined()
    expect(response.status).toBe(200)
    expect(data?.status).toBe('ok')
    expect(typeof data?.started_at).toBe('string')
  })

  it('sends the bearer token, and surfaces a typed 401 without it', async () => {
    const target = inProcessTarget({ token: 'tok' })
    const anon = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const denied = await anon.GET('/openapi.json')
    expect(denied.response.status).toBe(401)
    expect(denied.error).toMatchObject({ error: 'unauthorized' })
    const authed = createHttpClient({ baseUrl: target.baseUrl, token: 'tok', fetch: target.fetch })
    const ok = await authed.GET('/openapi.json')
    expect(ok.response.status).toBe(200)
    expect(ok.data).toMatchObject({ openapi: '3.1.0' })
  })

  it('validates inputs server-side: a bad query is a typed 400 invalid_query', async () => {
    const target = inProcessTarget()
    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const r = await api.GET('/runs', { params: { query: { limit: 'x' as unknown as number } } })
    expect(r.response.status).toBe(400)
    expect(r.error).toMatchObject({ error: 'invalid_query' })
  })
})
