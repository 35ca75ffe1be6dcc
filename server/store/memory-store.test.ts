/**
 * MemoryEventStore: the same contract as the file store, without a disk — validation, counter
 * checks, ordered notification, copies that callers cannot mutate, list filters.
 */
import { describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import { createLogger } from '../log.ts'
import { sampleEvent, sampleMeta, sampleSummary } from './fixtures/sample.ts'
import { MemoryEventStore } from './memory-store.ts'
import type { AgentPrefix } from './types.ts'

async function setup(agent: AgentPrefix = 'otter', at?: Date, model?: string, store = new MemoryEventStore()) {
  const meta = sampleMeta(agent, at, model)
  await store.create(meta, sampleSummary(meta))
  return { store, id: meta.session_id, meta }
}

describe('MemoryEventStore', () => {
  it('round-trips events, reads after a counter and loads copies', async () => {
    const { store, id, meta } = await setup()
    const sent = Array.from({ length: 9 }, (_, i) => sampleEvent(id, i + 1))
    for (const e of sent) await store.append(e)
    const loaded = await store.load(id)
    expect(loaded).toEqual({ meta, summary: sampleSummary(meta), events: sent, queued: [], repaired: false })
    expect(await store.read(id, 6)).toEqual(sent.slice(6))
    loaded!.events[0]!.seq = 99
    ;(sent[1] as { turn: number }).turn = 42
    expect((await store.read(id)).map((e) => [e.seq, e.turn])).toEqual(sent.map((e, i) => [i + 1, 0]))
  })

  it('rejects gaps, duplicates, invalid events and unknown sessions', async () => {
    const { store, id } = await setup()
    await store.append(sampleEvent(id, 1))
    await expect(store.append(sampleEvent(id, 3))).rejects.toMatchObject({ code: 'seq_mismatch' })
    await expect(store.append(sampleEvent(id, 1))).rejects.toMatchObject({ code: 'seq_mismatch' })
    const bad = { ...sampleEvent(id, 2, 'text_delta'), data: { text: 1 } } as unknown as AnyEvent
    await expect(store.append(bad)).rejects.toMatchObject({ code: 'invalid_event' })
    expect(await store.read(id)).toHaveLength(1)
    const other = sampleMeta('mink').session_id
    await expect(store.append(sampleEvent(other, 1))).rejects.toMatchObject({ code: 'session_not_found' })
    await expect(store.read(other)).rejects.toMatchObject({ code: 'session_not_found' })
    expect(await store.load(other)).toBeUndefined()
    await expect(store.load('../x')).rejects.toMatchObject({ code: 'invalid_session_id' })
    const meta = sampleMeta()
    await store.create(meta, sampleSummary(meta))
    await expect(store.create(meta, sampleSummary(meta))).rejects.toMatchObject({ code: 'session_exists' })
    await expect(store.create({ ...meta, session_id: 'otter-1' }, { session_id: 'otter-1' })).rejects.toMatchObject({
      code: 'invalid_meta',
    })
  })

  it('notifies in order; a throwing listener is logged and harmless', async () => {
    const lines: string[] = []
    const { store, id } = await setup(
      'otter',
      undefined,
      undefined,
      new MemoryEventStore({ logger: createLogger({ sink: (l) => lines.push(l) }) }),
    )
    const seen: number[] = []
    store.subscribe(id, () => {
      throw new Error('boom')
    })
    const off = store.subscribe(id, (e) => seen.push(e.seq))
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.append(sampleEvent(id, i + 1))))
    off()
    await store.append(sampleEvent(id, 11))
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(lines.filter((l) => l.includes('boom'))).toHaveLength(11)
  })

  it('lists newest first with filters, replaces summaries and removes sessions', async () => {
    const store = new MemoryEventStore()
    const a = (await setup('otter', new Date('2026-04-01T00:00:00Z'), 'claude-sonnet', store)).id
    const b = (await setup('ferret', new Date('2026-04-03T00:00:00Z'), 'gpt-5', store)).id
    const c = (await setup('mink', new Date('2026-04-02T00:00:00Z'), 'Claude-Opus', store)).id
    const ids = async (f?: Parameters<MemoryEventStore['list']>[0]) => (await store.list(f)).map((s) => s.session_id)
    expect(await ids()).toEqual([b, c, a])
    expect(await ids({ agents: ['otter', 'mink'] })).toEqual([c, a])
    expect(await ids({ since: new Date('2026-04-02T00:00:00Z') })).toEqual([b, c])
    expect(await ids({ model: 'gpt-5' })).toEqual([b])
    expect(await ids({ modelContains: 'claude', limit: 1 })).toEqual([c])
    await store.writeSummary(a, { session_id: a, started_at: '2026-05-01T00:00:00Z', model: 'x' })
    expect(await ids()).toEqual([a, b, c])
    await expect(store.writeSummary(a, { session_id: b })).rejects.toMatchObject({ code: 'invalid_summary' })
    await store.remove(b)
    expect(await ids()).toEqual([a, c])
  })
})
