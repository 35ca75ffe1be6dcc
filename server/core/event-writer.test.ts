/**
 * The event writer's group commit: events recorded without waiting go to the store together (one
 * `appendMany` per group), in order, each folded into the state only once persisted; a recorded
 * event that cannot be written fails the next `barrier` or `emit` with EventLogError, the
 * recorded events after it are not written, and the counter continues where the log ends.
 */
import { describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import { noopLogger } from '../log.ts'
import { sampleMeta, sampleSummary } from '../store/fixtures/sample.ts'
import { MemoryEventStore } from '../store/memory-store.ts'
import { AppendGroupError } from '../store/types.ts'
import { EventLogError, EventWriter } from './event-writer.ts'
import { initialState } from './state.ts'

/** A memory store with group commits, counting them; `failAt(seq)` makes that event's write fail. */
class GroupStore extends MemoryEventStore {
  groups: number[][] = []
  failAt: (seq: number) => boolean = () => false
  override async append(event: AnyEvent): Promise<void> {
    if (this.failAt(event.seq)) throw new Error('ENOSPC: no space left on device')
    return super.append(event)
  }
  async appendMany(events: readonly AnyEvent[]): Promise<void> {
    this.groups.push(events.map((e) => e.seq))
    for (let i = 0; i < events.length; i++) {
      try {
        await this.append(events[i]!)
      } catch (err) {
        throw new AppendGroupError(i, err)
      }
    }
  }
}

async function setup() {
  const store = new GroupStore()
  const meta = sampleMeta('otter')
  await store.create(meta, sampleSummary(meta))
  const state = initialState({
    session_id: meta.session_id,
    model: meta.model,
    mode: meta.mode,
    created_at: meta.created_at,
    working_dir: meta.cwd,
  })
  const heard: AnyEvent[] = []
  const writer = new EventWriter({
    store,
    state,
    sessionId: meta.session_id,
    logger: noopLogger,
    onEvent: (e) => heard.push(e),
  })
  return { store, state, writer, heard, id: meta.session_id }
}

describe('EventWriter group commit', () => {
  it('events recorded in one tick are written as one group, folded into the state once persisted', async () => {
    const { store, state, writer, heard, id } = await setup()
    writer.record('user_message', { message_id: 'm1', text: 'hi' })
    writer.record('turn_start', { prompt: 'hi', model: 'offline' })
    writer.record('step_start', { step: 1 })
    // Nothing is in the state before the group is on disk.
    expect(state.lastSeq).toBe(0)
    await writer.barrier()
    expect(store.groups).toEqual([[1, 2, 3]])
    expect(state.lastSeq).toBe(3)
    expect(heard.map((e) => [e.seq, e.type, e.turn])).toEqual([
      [1, 'user_message', 0],
      [2, 'turn_start', 0],
      [3, 'step_start', 0],
    ])
    expect((await store.read(id)).map((e) => e.seq)).toEqual([1, 2, 3])
    // An awaited emit after recorded ones resolves once it and everything before it is persisted.
    writer.record('step_end', { step: 1, stop_reason: 'end_turn' })
    const last = await writer.emit('turn_end', { stop_reason: 'end_turn', steps: 1 })
    expect(last.seq).toBe(5)
    expect(store.groups.at(-1)).toEqual([4, 5])
  })

  it('a recorded event that fails: the next barrier throws, the recorded events after it are not written, the counter continues', async () => {
    const { store, state, writer, id } = await setup()
    store.failAt = (seq) => seq === 2
    writer.record('user_message', { message_id: 'm1', text: 'hi' })
    writer.record('turn_start', { prompt: 'hi', model: 'offline' })
    writer.record('step_start', { step: 1 })
    await expect(writer.barrier()).rejects.toBeInstanceOf(EventLogError)
    expect(state.lastSeq).toBe(1)
    expect((await store.read(id)).map((e) => e.type)).toEqual(['user_message'])
    // The error was taken by the barrier: the next writes go on at seq 2.
    store.failAt = () => false
    const e = await writer.emit('error', { message: 'the turn was interrupted', source: 'store' })
    expect(e.seq).toBe(2)
    expect(state.lastSeq).toBe(2)
  })

  it('an awaited emit after a failed recorded event throws it without writing', async () => {
    const { store, writer, id } = await setup()
    store.failAt = (seq) => seq === 1
    writer.record('user_message', { message_id: 'm1', text: 'hi' })
    await writer.settled()
    await expect(writer.emit('turn_start', { prompt: 'hi', model: 'offline' })).rejects.toBeInstanceOf(EventLogError)
    await writer.settled()
    expect(await store.read(id)).toEqual([])
  })

  it('an awaited emit queued in the same tick behind a recorded event that fails is not written: it fails with that error, once', async () => {
    const { store, state, writer, id } = await setup()
    await writer.emit('user_message', { message_id: 'm1', text: 'hi' })
    // One refused write (EMFILE on one file of a group), then the store works again.
    let refused = false
    store.failAt = (seq) => seq === 2 && !refused && (refused = true)
    // A turn's end: turn_end recorded, the terminal event awaited, in one tick.
    writer.record('turn_end', { stop_reason: 'end_turn', steps: 1 })
    writer.post('text_delta', { step: 1, text: 'late' })
    await expect(writer.emit('error', { message: 'the terminal event', source: 'internal' })).rejects.toBeInstanceOf(
      EventLogError,
    )
    expect((await store.read(id)).map((e) => e.type)).toEqual(['user_message'])
    expect(state.lastSeq).toBe(1)
    // Handed over: the next write is not refused for the old failure, and goes on at seq 2.
    await writer.barrier()
    const e = await writer.emit('turn_start', { prompt: 'next', model: 'offline' })
    expect(e.seq).toBe(2)
  })
})
