/**
 * The listing operations of the store interface, the same checks against the file and the
 * memory store: `listPage` (filters, order, cursor paging that neither repeats nor skips a row
 * when sessions are created between pages, `invalid_cursor`), `scanSummaries` (every stored
 * summary as written, unvalidated) and `readSession` (read only); the Redis store too, over its
 * own private redis-server. Then `listSessions`, the one
 * listing every surface uses: live summaries win over stored ones, unpersisted live sessions are
 * listed, sessions being deleted are not, and `nextCursor` appears exactly when rows follow.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { redisStoreForTest } from './fixtures/redis-server.ts'
import { decodeCursor, listSessions } from './listing.ts'
import { MemoryEventStore } from './memory-store.ts'
import type { AgentPrefix, EventStore, PageQuery, StoredSummary } from './types.ts'
import { openedStores } from './fixtures/stores.ts'

const fileStores = openedStores()
afterEach(() => fileStores.closeAll())

const tmps: string[] = []
const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const t of tmps.splice(0)) rmSync(t, { recursive: true, force: true })
  for (const stop of stops.splice(0).reverse()) await stop()
})
const fileRoot = (): string => {
  const t = mkdtempSync(join(tmpdir(), 'chimera-listing-'))
  tmps.push(t)
  return join(t, 'eventlog')
}

const at = (day: number): Date => new Date(Date.UTC(2026, 3, day, 12))

async function add(
  store: EventStore,
  agent: AgentPrefix,
  day: number,
  over: Partial<SessionSummary> = {},
): Promise<SessionSummary> {
  const meta = sampleMeta(agent, at(day), over.model ?? 'offline-echo')
  const summary = { ...sampleSummary(meta), ...over, session_id: meta.session_id }
  await store.create({ ...meta, cwd: summary.working_dir ?? meta.cwd }, summary)
  return summary
}

const ids = (rows: { session_id: string }[]): string[] => rows.map((s) => s.session_id)

/** Every page of a query, following `nextCursor`. */
async function allPages(store: EventStore, query: PageQuery): Promise<string[][]> {
  const pages: string[][] = []
  let cursor: string | undefined
  do {
    const p = await store.listPage({ ...query, ...(cursor ? { cursor } : {}) })
    pages.push(ids(p.sessions))
    cursor = p.nextCursor
  } while (cursor !== undefined)
  return pages
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

const stores: [string, () => EventStore | Promise<EventStore>][] = [
  ['file', () => fileStores.open({ root: fileRoot() })],
  ['memory', () => new MemoryEventStore()],
  ['Redis', () => redisStoreForTest(stops)],
]

describe.each(stores)('%s store: listPage', (_name, make) => {
  it('pages newest first with an opaque cursor; nextCursor exactly when rows follow', async () => {
    const store = await make()
    const made = [] as SessionSummary[]
    for (let d = 1; d <= 7; d++) made.push(await add(store, d % 2 ? 'otter' : 'ferret', d))
    const newest = ids([...made].reverse())
    expect(await allPages(store, { limit: 3 })).toEqual([newest.slice(0, 3), newest.slice(3, 6), newest.slice(6)])
    expect(await allPages(store, { limit: 7 })).toEqual([newest])
    expect(await allPages(store, {})).toEqual([newest])
    expect(await allPages(store, { limit: 3, agents: ['otter'] })).toEqual([
      [made[6], made[4], made[2]].map((s) => s.session_id),
      [made[0]!.session_id],
    ])
  })

  it('a session created between pages neither shifts nor repeats a row', async () => {
    const store = await make()
    const old = [await add(store, 'otter', 1), await add(store, 'otter', 2), await add(store, 'otter', 3)]
    const first = await store.listPage({ limit: 2 })
    expect(ids(first.sessions)).toEqual([old[2]!.session_id, old[1]!.session_id])
    await add(store, 'otter', 9)
    const second = await store.listPage({ limit: 2, cursor: first.nextCursor! })
    expect(ids(second.sessions)).toEqual([old[0]!.session_id])
    expect(second.nextCursor).toBeUndefined()
  })

  it('filters by since, exact model, model substring and working directory', async () => {
    const store = await make()
    const a = await add(store, 'otter', 1, { model: 'Claude-Opus', working_dir: '/w/a' })
    const b = await add(store, 'mink', 2, { model: 'gpt-5', working_dir: '/w/b' })
    const c = await add(store, 'ferret', 3, { model: 'claude-sonnet', working_dir: '/w/a' })
    expect(ids((await store.listPage({ since: at(2) })).sessions)).toEqual([c.session_id, b.session_id])
    expect(ids((await store.listPage({ model: 'gpt-5' })).sessions)).toEqual([b.session_id])
    expect(ids((await store.listPage({ model: 'claude' })).sessions)).toEqual([])
    expect(ids((await store.listPage({ modelContains: 'CLAUDE' })).sessions)).toEqual([c.session_id, a.session_id])
    expect(ids((await store.listPage({ cwd: '/w/a' })).sessions)).toEqual([c.session_id, a.session_id])
    expect(ids(await store.list({ cwd: '/w/b' }))).toEqual([b.session_id])
  })

  it('refuses a cursor it did not make', async () => {
    const store = await make()
    await add(store, 'otter', 1)
    for (const cursor of ['100', 'not a cursor', Buffer.from('[1]').toString('base64url'), ''])
      await expect(store.listPage({ cursor })).rejects.toMatchObject({ code: 'invalid_cursor' })
  })
})

describe.each(stores)('%s store: scanSummaries and readSession', (_name, make) => {
  it('scans every stored summary of the agents asked for', async () => {
    const store = await make()
    const a = await add(store, 'otter', 1)
    const b = await add(store, 'mink', 2)
    const scanned = await collect(store.scanSummaries())
    const byId = (xs: StoredSummary[]) => [...xs].sort((x, y) => (x.session_id < y.session_id ? -1 : 1))
    expect(byId(scanned)).toEqual(byId([a, b].map((s) => ({ session_id: s.session_id, summary: s }))))
    expect(ids(await collect(store.scanSummaries({ agents: ['mink'] })))).toEqual([b.session_id])
  })

  it('reads a session without changing it; undefined for an unknown or invalid id', async () => {
    const store = await make()
    const s = await add(store, 'otter', 1)
    const events = [1, 2, 3].map((n) => sampleEvent(s.session_id, n))
    for (const e of events) await store.append(e)
    const got = await store.readSession(s.session_id)
    expect(got).toMatchObject({ summary: s, events })
    expect(got?.meta.session_id).toBe(s.session_id)
    expect(await store.readSession(sampleMeta('otter', at(20)).session_id)).toBeUndefined()
    expect(await store.readSession('../etc')).toBeUndefined()
  })
})

describe('file store specifics', () => {
  it('scanSummaries reports damaged and loosely named directories as they are (the rollups count them)', async () => {
    const root = fileRoot()
    const store = fileStores.open({ root })
    const good = await add(store, 'otter', 1)
    const loose = join(root, 'mink-run-1')
    const { mkdirSync } = await import('node:fs')
    mkdirSync(loose)
    writeFileSync(join(loose, 'summary.json'), JSON.stringify({ session_id: 'mink-run-1', cost_usd: 'x' }))
    mkdirSync(join(root, 'ferret-broken'))
    writeFileSync(join(root, 'ferret-broken', 'summary.json'), '{not json')
    mkdirSync(join(root, 'not-a-session'))
    const scanned = new Map((await collect(store.scanSummaries())).map((x) => [x.session_id, x.summary]))
    expect([...scanned.keys()].sort()).toEqual(['ferret-broken', 'mink-run-1', good.session_id].sort())
    expect(scanned.get('mink-run-1')).toEqual({ session_id: 'mink-run-1', cost_usd: 'x' })
    expect(scanned.get('ferret-broken')).toBeUndefined()
  })

  it('readSession leaves a torn tail where it is (load would quarantine it)', async () => {
    const root = fileRoot()
    const store = fileStores.open({ root })
    const s = await add(store, 'otter', 1)
    await store.append(sampleEvent(s.session_id, 1))
    const torn = 'event-000002-turn_start.json'
    writeFileSync(join(root, s.session_id, torn), '{"seq":2,')
    const before = readdirSync(join(root, s.session_id)).sort()
    const fresh = fileStores.open({ root })
    expect((await fresh.readSession(s.session_id))?.events).toHaveLength(1)
    expect(readdirSync(join(root, s.session_id)).sort()).toEqual(before)
  })
})

describe('listSessions: the one listing', () => {
  const live = (rows: SessionSummary[], hidden: string[] = []) => ({
    summaries: () => rows,
    hidden: (id: string) => hidden.includes(id),
  })

  it('a live summary replaces the stored one, and the filter applies to it', async () => {
    const store = new MemoryEventStore()
    const a = await add(store, 'otter', 1, { model: 'm-old' })
    const b = await add(store, 'otter', 2, { model: 'm-old' })
    const now = { ...a, model: 'm-new', status: 'running' as const }
    expect((await listSessions(store, {}, live([now]))).sessions).toEqual([b, now])
    expect(ids((await listSessions(store, { model: 'm-new' }, live([now]))).sessions)).toEqual([a.session_id])
    expect(ids((await listSessions(store, { model: 'm-old' }, live([now]))).sessions)).toEqual([b.session_id])
  })

  it('lists live sessions the store does not hold, hides deleting ones, and pages across both', async () => {
    const store = new MemoryEventStore()
    const stored = [await add(store, 'otter', 1), await add(store, 'otter', 3), await add(store, 'otter', 5)]
    const other = new MemoryEventStore()
    const memory = [await add(other, 'otter', 2), await add(other, 'otter', 4), await add(other, 'ferret', 6)]
    const view = live(memory, [stored[1]!.session_id])
    const want = [memory[2], stored[2], memory[1], memory[0], stored[0]].map((s) => s!.session_id)
    const pages: string[][] = []
    let cursor: string | undefined
    do {
      const p = await listSessions(store, { limit: 2, ...(cursor ? { cursor } : {}) }, view)
      pages.push(ids(p.sessions))
      cursor = p.nextCursor
    } while (cursor)
    expect(pages).toEqual([want.slice(0, 2), want.slice(2, 4), want.slice(4)])
    expect(ids((await listSessions(store, { agents: ['otter'] }, view)).sessions)).toEqual(want.slice(1))
    expect((await listSessions(store, {}, view)).nextCursor).toBeUndefined()
  })

  it('reads past stored rows it must hide, so a full page still comes back', async () => {
    const store = new MemoryEventStore()
    const rows = [] as SessionSummary[]
    for (let d = 1; d <= 6; d++) rows.push(await add(store, 'otter', d))
    const hidden = rows.slice(3).map((s) => s.session_id)
    const p = await listSessions(store, { limit: 2 }, live([], hidden))
    expect(ids(p.sessions)).toEqual([rows[2]!.session_id, rows[1]!.session_id])
    expect(decodeCursor(p.nextCursor!).id).toBe(rows[1]!.session_id)
    const last = await listSessions(store, { limit: 2, cursor: p.nextCursor! }, live([], hidden))
    expect(ids(last.sessions)).toEqual([rows[0]!.session_id])
    expect(last.nextCursor).toBeUndefined()
  })
})
