/**
 * The features routes' server-side failures, which no valid request can cause on a healthy
 * server (the transcripts in conformance/transcripts/http/ cover every other status): a
 * command renderer that raises is `500 command_invoke_failed` with a detail, and an event-log
 * root that cannot be read is `500 runs_cost_failed` on `/runs` and `/runs/cost`. Driven through
 * the generated openapi-fetch client.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createHttpClient } from '../../client/index.ts'
import { inProcessTarget, type ServerTarget } from '../../conformance/harness/targets.ts'
import { CustomCommands } from '../commands/custom-commands.ts'
import { CSP } from '../share/transcript-html.ts'
import { eventlogRoot } from '../store/paths.ts'
import { loadFrontmatterParser } from '../commands/frontmatter.ts'

// Command and agent files are read synchronously once the YAML parser is loaded (the manager and the routes load it).
beforeAll(() => loadFrontmatterParser())

/** A command palette whose renderer fails (a template engine bug, a file gone mid-render). */
class FailingCommands extends CustomCommands {
  override render(): string | undefined {
    throw new Error('template render error')
  }
}

let target: ServerTarget | undefined
afterEach(async () => {
  await target?.close()
  target = undefined
})

describe('features routes: server-side failures', () => {
  it('a renderer that raises is 500 command_invoke_failed, and nothing is submitted', async () => {
    target = inProcessTarget({ commands: (cwd) => new FailingCommands({ cwd, userDir: join(cwd, 'none') }) })
    mkdirSync(join(target.cwd, '.opencode', 'command'), { recursive: true })
    writeFileSync(join(target.cwd, '.opencode', 'command', 'hello.md'), 'Say hello to $1\n')
    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const created = await api.POST('/session', { body: {} })
    expect(created.response.status).toBe(201)
    const id = created.data!.session_id
    const r = await api.POST('/commands/{name}/invoke', {
      params: { path: { name: 'hello' } },
      body: { session_id: id, args: ['otter'] },
    })
    expect(r.response.status).toBe(500)
    expect(r.error).toEqual({
      error: 'command_invoke_failed',
      message: '/hello: template render error',
      detail: 'template render error',
    })
    const snap = await api.GET('/session/{id}', { params: { path: { id } } })
    expect(snap.data).toMatchObject({ status: 'idle', event_count: 0, messages: [] })
  })

  it('an unreadable event-log root is 500 runs_cost_failed on /runs and /runs/cost', async () => {
    target = inProcessTarget()
    const root = eventlogRoot(target.home)
    rmSync(root, { recursive: true, force: true })
    writeFileSync(root, 'not a directory')
    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    for (const path of ['/runs', '/runs/cost'] as const) {
      const r = await api.GET(path)
      expect(r.response.status, path).toBe(500)
      expect(r.error, path).toMatchObject({ error: 'runs_cost_failed', detail: expect.stringContaining('ENOTDIR') })
    }
  })

  it('the HTML transcript carries its CSP as a header, and JSON (error) answers say nosniff', async () => {
    target = inProcessTarget()
    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const id = (await api.POST('/session', { body: {} })).data!.session_id
    const page = await target.fetch(new Request(`${target.baseUrl}/sessions/${id}/transcript`))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toBe(CSP)
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    const missing = await target.fetch(
      new Request(`${target.baseUrl}/sessions/otter-20250101T000000Z-00000000-0000-4000-8000-000000000000/transcript`),
    )
    expect(missing.status).toBe(404)
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff')
    const bad = await target.fetch(
      new Request(`${target.baseUrl}/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      }),
    )
    expect(bad.status).toBe(400)
    expect(bad.headers.get('x-content-type-options')).toBe('nosniff')
  })
})
