/**
 * Every surface lists sessions by one rule (store/listing.ts `listSessions`): `GET /sessions`,
 * ACP `session/list` on the seed wire and on v1 (all pages), and `chimera otter sessions list`'s
 * reader give the same sessions in the same order — persisted ones, a live one by its current
 * summary, live unpersisted ones (not the CLI, which has no live sessions) — each surface keeping
 * only what its spec says it lists (ACP: its own agent's; HTTP and the CLI: all agents).
 * Pinned changes: ACP lists live `persist: false` sessions too, and v1's cursor is an opaque
 * position that neither repeats nor skips a row when a session is created between pages (an
 * offset such as `"100"` is no longer a cursor).
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createHttpClient } from '../../client/index.ts'
import { inProcessTarget, type ServerTarget } from '../../conformance/harness/targets.ts'
import { startAcp } from '../acp/fixtures/in-process.ts'
import { SessionManager } from '../core/manager.ts'
import { listSessions } from '../store/listing.ts'
import { openEventStore } from '../store/open.ts'

let target: ServerTarget | undefined
afterEach(async () => {
  await target?.close()
  target = undefined
})

/** Every `sessionId` of a v1 `session/list`, following `nextCursor`; and the pages' sizes. */
async function v1Pages(
  s: ReturnType<typeof startAcp>,
  params: Record<string, unknown> = {},
): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = []
  const sizes: number[] = []
  let cursor: string | undefined
  do {
    const r = await s.call('session/list', { ...params, ...(cursor ? { cursor } : {}) })
    expect(r.error).toBeUndefined()
    const rows = r.result.sessions as { sessionId: string }[]
    ids.push(...rows.map((x) => x.sessionId))
    sizes.push(rows.length)
    cursor = r.result.nextCursor as string | undefined
  } while (cursor !== undefined)
  return { ids, sizes }
}

describe('one listing on every surface', () => {
  it('HTTP, the seed wire, ACP v1 and the CLI reader list the same sessions in the same order', async () => {
    target = inProcessTarget()
    const manager = target.server.deps.manager
    const other = join(target.cwd, 'other')
    mkdirSync(other)
    const a = await manager.create()
    const b = await manager.create({ cwd: other })
    const memory = await manager.create({ persist: false })
    const c = await manager.create()
    await c.rename('Renamed while live')
    // A ferret session in the same home: HTTP and the CLI list every agent's, ACP only its own.
    const ferretManager = new SessionManager({ agent: 'ferret', cwd: target.cwd, home: target.home })
    const f = await ferretManager.create()
    await ferretManager.shutdown()
    // One more evicted from memory: listed from the store.
    const gone = await manager.create()
    await manager.delete(gone.id)

    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const http = await api.GET('/sessions', { params: { query: { limit: 100 } } })
    const httpIds = http.data!.sessions.map((s) => s.session_id)
    const otterIds = [gone, c, memory, b, a].map((s) => s.id)
    // Created in this order within the same second or more: newest first, ties by id descending.
    const expected = await manager.list({ agents: ['otter'] })
    expect(expected.map((s) => s.session_id).sort()).toEqual([...otterIds].sort())
    expect(httpIds.filter((id) => id !== f.id)).toEqual(expected.map((s) => s.session_id))
    expect(httpIds).toContain(f.id)
    expect(http.data!.sessions.find((s) => s.session_id === c.id)?.title).toBe('Renamed while live')

    const seed = startAcp('otter', manager)
    await seed.call('initialize', {})
    const seedRows = (await seed.call('session/list', {})).result.sessions as { session_id: string }[]
    expect(seedRows.map((s) => s.session_id)).toEqual(expected.map((s) => s.session_id))
    seed.input.end()
    await seed.done

    const v1 = startAcp('otter', manager)
    await v1.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    expect((await v1Pages(v1)).ids).toEqual(expected.map((s) => s.session_id))
    expect((await v1Pages(v1, { cwd: other })).ids).toEqual([b.id])
    v1.input.end()
    await v1.done

    // The CLI's reader: the same rule over the store alone (no live, unpersisted sessions).
    const cli = await listSessions(openEventStore(target.home), {})
    expect(cli.sessions.map((s) => s.session_id)).toEqual(httpIds.filter((id) => id !== memory.id))
  })

  it('ACP v1 pages by an opaque position: a session created between pages neither repeats nor shifts a row', async () => {
    target = inProcessTarget()
    const manager = target.server.deps.manager
    const made: string[] = []
    for (let i = 0; i < 102; i++) made.push((await manager.create()).id)
    const s = startAcp('otter', manager)
    await s.call('initialize', { protocolVersion: 1, clientCapabilities: {} })
    const first = await s.call('session/list', {})
    expect(first.result.sessions).toHaveLength(100)
    expect(typeof first.result.nextCursor).toBe('string')
    const later = await manager.create()
    const second = await s.call('session/list', { cursor: first.result.nextCursor })
    const seen = [...first.result.sessions, ...second.result.sessions].map((x: { sessionId: string }) => x.sessionId)
    expect(second.result.nextCursor).toBeUndefined()
    expect(seen).toHaveLength(102)
    expect(new Set(seen)).toEqual(new Set(made))
    expect(seen).not.toContain(later.id)
    // An offset is not a cursor (it was before: "100" meant "from row 100").
    const old = await s.call('session/list', { cursor: '100' })
    expect(old.error).toMatchObject({ code: -32602, data: { issues: [{ path: 'cursor', message: 'unknown cursor' }] } })
    s.input.end()
    await s.done
  })
})
