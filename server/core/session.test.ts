/**
 * A session around its turns: the turn queue (in order, one turn at a time — also when a
 * prompt arrives just as a turn finishes), steering, cancellation (partial output, Bash process
 * groups killed), compaction, model and mode switches, tool allow-lists, and `persist: false`.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import { OfflineProvider } from '../providers/offline.ts'
import { MemoryEventStore } from '../store/memory-store.ts'
import { eventlogRoot } from '../store/paths.ts'
import type { BashData } from '../tools/bash.ts'
import type { AnyEvent } from '../events/event-types.ts'
import type { Rule } from './permissions.ts'
import { heldModel } from './fixtures/scripted-provider.ts'
import type { TurnOutcome } from './loop.ts'
import { ModelRegistry } from './model-registry.ts'
import type { Session } from './session.ts'
import {
  last,
  ofType,
  processAlive,
  sleep,
  testEnv,
  textOf,
  turnEvents,
  typesOf,
  until,
  waitForEvent,
  waitForType,
  within,
  type TestEnv,
} from './fixtures/harness.ts'

const rules = (...entries: [string, Rule][]): Map<string, Rule> => new Map(entries)

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-session-')
})
afterEach(async () => {
  await env.cleanup()
})

/** The turn indices of the events in seq order never go back: turns did not interleave. */
function expectSequentialTurns(events: AnyEvent[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
  const turns = events.map((e) => e.turn)
  for (let i = 1; i < turns.length; i++)
    if (turns[i]! < turns[i - 1]!)
      expect.fail(
        `event ${events[i]!.seq} (${events[i]!.type}) belongs to turn ${turns[i]} after an event of turn ${turns[i - 1]}`,
      )
  // turn_start and turn_end alternate: one turn at a time.
  const bounds = events
    .filter((e) => e.type === 'turn_start' || e.type === 'turn_end')
    .map((e) => `${e.type}#${e.turn}`)
  const alternating = bounds.map((_, i) => `${i % 2 === 0 ? 'turn_start' : 'turn_end'}#${Math.floor(i / 2)}`)
  expect(bounds, 'turns must not overlap').toEqual(alternating)
}

/** Resolve order of a set of `done` promises. */
function trackOrder(dones: Promise<TurnOutcome>[]): number[] {
  const order: number[] = []
  dones.forEach((d, i) => void d.then(() => order.push(i)))
  return order
}

/** Pids of running processes whose command line contains `pattern`. */
function pgrep(pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number)
  } catch {
    return [] // exit 1: nothing matched
  }
}

describe('the turn queue', () => {
  it('runs prompts sent at once one after another, in order', async () => {
    const session = await env.manager().create()
    expect(session.status).toBe('idle')
    const sent = [session.prompt('!sleep 200\n!say one'), session.prompt('!say two'), session.prompt('!say three')]
    expect(session.status).toBe('running')
    const order = trackOrder(sent.map((p) => p.done))
    const outcomes = await within(Promise.all(sent.map((p) => p.done)), 8000, 'three queued turns')
    expect(outcomes.map((o) => o.output)).toEqual(['one', 'two', 'three'])
    expect(order).toEqual([0, 1, 2])
    expect(session.status).toBe('idle')
    await within(session.idle(), 1000, 'idle()')

    const events = await session.events()
    expectSequentialTurns(events)
    expect(ofType(events, 'user_message').map((e) => [e.turn, e.data.text, e.data.message_id])).toEqual([
      [0, '!sleep 200\n!say one', sent[0]!.messageId],
      [1, '!say two', sent[1]!.messageId],
      [2, '!say three', sent[2]!.messageId],
    ])
    expect(ofType(events, 'agent_result').map((e) => [e.turn, e.data.output])).toEqual([
      [0, 'one'],
      [1, 'two'],
      [2, 'three'],
    ])
  })

  it('a queued prompt waits: its user_message is only emitted when its turn starts', async () => {
    const held = heldModel()
    const session = await env.manager(held).create()
    const first = session.prompt('!hold\n!say one')
    const second = session.prompt('!say two')
    await waitForType(session, 'step_start')
    expect(ofType(await session.events(), 'user_message')).toHaveLength(1)
    held.release()
    await within(Promise.all([first.done, second.done]), 5000, 'both turns')
    expect(ofType(await session.events(), 'user_message')).toHaveLength(2)
  })

  it('a prompt that arrives while the previous turn is finishing still waits its turn', async () => {
    // A store whose summary writes are slow widens the moment between a turn's end and the
    // resolution of its `done`, which is when a client typically sends its next prompt.
    class SlowSummaries extends MemoryEventStore {
      override async writeSummary(id: string, s: SessionSummary): Promise<void> {
        await sleep(150)
        return super.writeSummary(id, s)
      }
    }
    const session = await env.manager({ store: new SlowSummaries() }).create()
    const first = session.prompt('!say one')
    await waitForType(session, 'agent_result')
    await sleep(40) // the first turn is over but still finishing: its summary is being written
    const second = session.prompt('!sleep 400\n!say two')
    const third = session.prompt('!say three')
    const order = trackOrder([first.done, second.done, third.done])
    expect(session.status).toBe('running')
    const outcomes = await within(Promise.all([first.done, second.done, third.done]), 8000, 'three turns')
    expect(outcomes.map((o) => o.output)).toEqual(['one', 'two', 'three'])
    expectSequentialTurns(await session.events())
    expect(order).toEqual([0, 1, 2])
  })
})

describe('steering', () => {
  it('delivers a steering message before the next model call', async () => {
    const held = heldModel()
    const session = await env.manager(held).create()
    expect(await session.steer('too early')).toBe(false)
    const { done } = session.prompt('!hold\n!say first')
    await waitForType(session, 'step_start')
    expect(await session.steer('!say steered')).toBe(true)
    held.release()
    const outcome = await within(done, 5000, 'the steered turn')
    expect(outcome).toEqual({ stop_reason: 'end_turn', success: true, output: 'steered' })
    expect(await session.steer('too late')).toBe(false)

    const events = await session.events()
    const types = typesOf(events)
    const steering = ofType(events, 'steering')
    expect(steering.map((e) => [e.turn, e.data.text])).toEqual([[0, '!say steered']])
    expect(steering[0]!.data.message_id).toMatch(/^msg-/)
    const at = types.indexOf('steering')
    const steps = events.flatMap((e, i) => (e.type === 'step_start' ? [i] : []))
    expect(steps).toHaveLength(2)
    expect(at).toBeGreaterThan(steps[0]!)
    expect(at).toBeLessThan(steps[1]!)
    expect(types[at - 1]).toBe('step_end')
    expect(types[at + 1]).toBe('step_start')
    expect(ofType(events, 'step_end').map((e) => e.data)).toEqual([
      { step: 1, stop_reason: 'steering' },
      { step: 2, stop_reason: 'end_turn' },
    ])
    expect(textOf(events.filter((e) => e.type === 'text_delta' && e.data.step === 1))).toBe('first')
    expect(textOf(events.filter((e) => e.type === 'text_delta' && e.data.step === 2))).toBe('steered')
    expect(last(events)).toMatchObject({ type: 'agent_result', data: { output: 'steered', steps: 2 } })
    expect(session.messages()).toEqual([
      { role: 'user', content: '!hold\n!say first' },
      { role: 'assistant', content: 'first' },
      { role: 'user', content: '!say steered' },
      { role: 'assistant', content: 'steered' },
    ])
  })

  it('a steer() that returns true is never silently dropped (even at the very end of a turn)', async () => {
    const session = await env.manager().create()
    let steered: Promise<boolean> | undefined
    const unsubscribe = session.subscribe((e) => {
      // The model has finished; the turn is still running (turn_end not yet written).
      if (e.type === 'step_end' && e.data.stop_reason === 'end_turn' && steered === undefined)
        steered = session.steer('!say late')
    })
    await within(session.prompt('!say hi').done, 5000, 'the turn')
    unsubscribe()
    const accepted = await steered
    await within(session.idle(), 2000, 'idle')
    const events = await session.events()
    const delivered = ofType(events, 'steering').some((e) => e.data.text === '!say late')
    expect(accepted).toBeDefined()
    // docs/decisions/0008: "If the model had already finished, the turn makes one more model call
    // so the message is seen." Accepting the message and then losing it is the one wrong answer.
    if (accepted) expect(delivered, 'steer() returned true, but no steering event was ever emitted').toBe(true)
  })
})

describe('cancellation', () => {
  it('cancels a sleeping model call: turn_end cancelled and a cancelled event with the partial output', async () => {
    const session = await env.manager().create()
    expect(session.cancel()).toBe(false)
    const { done } = session.prompt('!say some partial text\n!sleep 5000')
    await waitForEvent(session, (e) => e.type === 'text_delta' && e.data.text.endsWith('text'), 5000, 'the last word')
    const t0 = Date.now()
    expect(session.cancel()).toBe(true)
    expect(session.status).toBe('cancelled')
    const outcome = await within(done, 2000, 'the cancelled turn')
    expect(Date.now() - t0).toBeLessThan(1000)
    expect(outcome).toEqual({ stop_reason: 'cancelled', success: false, output: 'some partial text' })
    expect(session.status).toBe('idle')
    expect(session.cancel()).toBe(false)

    const events = await session.events()
    expect(typesOf(events).slice(-3)).toEqual(['step_end', 'turn_end', 'cancelled'])
    expect(ofType(events, 'step_end')[0]!.data).toEqual({ step: 1, stop_reason: 'cancelled' })
    expect(ofType(events, 'turn_end')[0]!.data).toEqual({ stop_reason: 'cancelled', steps: 1 })
    expect(last(events)).toMatchObject({ type: 'cancelled', data: { partial_output: 'some partial text' } })
    expect(ofType(events, 'agent_result')).toHaveLength(0)

    // The session goes on.
    const next = await within(session.prompt('!say again').done, 5000, 'the next turn')
    expect(next).toEqual({ stop_reason: 'end_turn', success: true, output: 'again' })
    expect(turnEvents(await session.events(), 1).at(-1)?.type).toBe('agent_result')
  })

  it('cancelling runs the queued prompts afterwards', async () => {
    const session = await env.manager().create()
    const first = session.prompt('!sleep 5000')
    const second = session.prompt('!say second')
    await waitForType(session, 'step_start')
    expect(session.cancel()).toBe(true)
    expect((await within(first.done, 2000, 'the cancelled turn')).stop_reason).toBe('cancelled')
    expect(await within(second.done, 5000, 'the queued turn')).toEqual({
      stop_reason: 'end_turn',
      success: true,
      output: 'second',
    })
    expectSequentialTurns(await session.events())
  })

  it('kills a running Bash command with its whole process group', async () => {
    const marker = `sleep 30.${process.pid % 1000}${Date.now() % 1000}`
    const session = await env.manager({ permissionOverrides: rules(['Bash', 'allow']) }).create()
    const { done } = session.prompt(`!call Bash ${JSON.stringify({ command: `${marker} & ${marker}` })}`)
    await waitForType(session, 'tool_call')
    let running: number[] = []
    await until(() => (running = pgrep(marker)).length >= 2, 5000, 'both sleeps to run')
    expect(session.cancel()).toBe(true)
    const outcome = await within(done, 6000, 'the cancelled Bash turn')
    expect(outcome.stop_reason).toBe('cancelled')

    const events = await session.events()
    const result = ofType(events, 'tool_result')
    expect(result).toHaveLength(1)
    expect(result[0]!.data.ok).toBe(false)
    expect(result[0]!.data.error).toMatch(/cancel/)
    expect(last(events)).toMatchObject({ type: 'cancelled' })
    const data = result[0]!.data.data as BashData | undefined
    expect(data?.cancelled).toBe(true)
    if (typeof data?.pid === 'number') {
      const pid = data.pid
      await until(() => !processAlive(pid, true), 5000, `process group ${pid} to be gone`)
    }
    await until(() => pgrep(marker).every((p) => !running.includes(p)), 5000, 'the sleeps to be gone')
    expect(pgrep(marker)).toEqual([])
  })
})

describe('compaction', () => {
  it('summarises the history into one system message, recorded as an event', async () => {
    const session = await env.manager().create()
    await within(session.prompt('!say one').done, 5000, 'turn 1')
    await within(session.prompt('!say two').done, 5000, 'turn 2')
    const before = session.messages()
    expect(before).toHaveLength(4)
    const seq = session.lastSeq
    const event = await session.compact()
    expect(event.type).toBe('compaction')
    expect(event.seq).toBe(seq + 1)
    expect(event.data.messages_before).toBe(before.length)
    expect(event.data.messages_after).toBe(1)
    expect(event.data.summary).toContain('- user: !say one')
    expect(event.data.summary).toContain('- assistant: two')
    expect(session.messages()).toEqual([{ role: 'system', content: event.data.summary }])
    expect(last(await session.events())).toEqual(event)

    // The next turn starts from the summary.
    expect((await within(session.prompt('!say three').done, 5000, 'turn 3')).output).toBe('three')
    expect(session.messages().map((m) => m.role)).toEqual(['system', 'user', 'assistant'])
  })

  it('refuses to compact while a turn is running', async () => {
    const held = heldModel()
    const session = await env.manager(held).create()
    const { done } = session.prompt('!hold\n!say done')
    await waitForType(session, 'step_start')
    await expect(session.compact()).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'session_busy' }),
    )
    held.release()
    expect((await within(done, 5000, 'the turn')).output).toBe('done')
    expect(ofType(await session.events(), 'compaction')).toHaveLength(0)
  })
})

class AltProvider extends OfflineProvider {
  override models(): readonly string[] {
    return ['offline-alt']
  }
}

describe('model switch', () => {
  it('setModel to the current model is a no-op; an unknown model throws and changes nothing', async () => {
    const session = await env.manager().create()
    const seq = session.lastSeq
    await session.setModel('offline')
    expect(session.lastSeq).toBe(seq)
    await expect(session.setModel('nope')).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'unknown_model' }),
    )
    await expect(session.setModel('nope')).rejects.toThrow(/unknown model "nope"; available: offline/)
    expect(session.model).toBe('offline')
    expect(session.lastSeq).toBe(seq)
  })

  it('a real switch is an event, and the next turn runs on the new model', async () => {
    const models = new ModelRegistry([new OfflineProvider(), new AltProvider()])
    const session = await env.manager({ models }).create()
    await session.setModel('offline-alt')
    expect(session.model).toBe('offline-alt')
    expect(last(await session.events())).toMatchObject({
      type: 'model_changed',
      data: { old: 'offline', new: 'offline-alt' },
    })
    await within(session.prompt('!say hi').done, 5000, 'the turn')
    expect(ofType(await session.events(), 'turn_start')[0]!.data.model).toBe('offline-alt')
  })
})

describe('mode and tool allow-lists', () => {
  const names = (s: Session): string[] => s.availableTools().map((t) => t.name)

  it('plan mode offers only the read-only tools and refuses a Write call', async () => {
    const session = await env.manager().create()
    expect(names(session).sort()).toEqual(
      ['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Write', 'list_files', 'update_plan', 'open_file'].sort(),
    )
    await session.setMode('plan')
    expect(session.mode).toBe('plan')
    expect(last(await session.events())).toMatchObject({ type: 'mode_changed', data: { old: 'build', new: 'plan' } })
    expect(names(session)).not.toEqual(expect.arrayContaining(['Write']))
    for (const t of ['Write', 'Edit', 'Bash']) expect(names(session)).not.toContain(t)
    expect(names(session).sort()).toEqual(['Glob', 'Grep', 'Read', 'list_files', 'open_file', 'update_plan'])

    await within(session.prompt('!call Write {"path":"x.txt","content":"hi"}').done, 5000, 'the turn')
    const result = ofType(await session.events(), 'tool_result')
    expect(result).toHaveLength(1)
    expect(result[0]!.data.ok).toBe(false)
    expect(result[0]!.data.error).toMatch(/not allowed/)
    expect(existsSync(join(env.cwd, 'x.txt'))).toBe(false)
    await expect(session.setMode('yolo')).rejects.toThrow(/unknown mode "yolo"/)
  })

  it('a session created in plan mode refuses Bash', async () => {
    const session = await env.manager({ permissionOverrides: rules(['Bash', 'allow']) }).create({ mode: 'plan' })
    await within(session.prompt('!call Bash {"command":"touch made.txt"}').done, 5000, 'the turn')
    expect(ofType(await session.events(), 'tool_result')[0]!.data).toMatchObject({
      ok: false,
      error: expect.stringMatching(/not allowed/),
    })
    expect(existsSync(join(env.cwd, 'made.txt'))).toBe(false)
  })

  it('allowedTools narrows the tools offered and run', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'hello\n')
    const session = await env.manager().create({ allowedTools: ['Read'] })
    expect(names(session)).toEqual(['Read'])
    await within(session.prompt('!call Read {"path":"a.txt"}\n!call Glob {"pattern":"*"}').done, 5000, 'the turn')
    const results = ofType(await session.events(), 'tool_result')
    expect(results.map((r) => [r.data.tool, r.data.ok])).toEqual([
      ['Read', true],
      ['Glob', false],
    ])
    expect(results[1]!.data.error).toMatch(/not allowed/)
    await expect(env.manager().create({ allowedTools: ['Reed'] })).rejects.toThrow(/unknown tool\(s\) Reed/)
  })
})

describe('persist: false', () => {
  it('keeps the session in memory and leaves nothing under the eventlog directory', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'hello\n')
    const manager = env.manager()
    const session = await manager.create({ persist: false })
    expect(session.persist).toBe(false)
    await within(session.prompt('!call Read {"path":"a.txt"}').done, 5000, 'the turn')
    await session.compact()
    const events = await session.events()
    expect(events.length).toBeGreaterThan(5)
    expect(ofType(events, 'agent_result')).toHaveLength(1)
    const root = eventlogRoot(env.home)
    expect(existsSync(root) ? readdirSync(root) : []).toEqual([])
    expect((await manager.store.list()).map((s) => s.session_id)).not.toContain(session.id)
    // Not stored, but listed while it is live, as on every surface (store/listing.ts).
    expect((await manager.list()).map((s) => s.session_id)).toContain(session.id)
    expect(await manager.get(session.id)).toBe(session)
  })
})

describe('steers a turn never took', () => {
  it('are closed like prompts that never ran when the turn is cancelled, never dropped without a trace', async () => {
    const session = await env.manager().create()
    const { done } = session.prompt('!sleep 2000\n!say never')
    await waitForType(session, 'step_start')
    expect(await session.steer('!say steered then cancelled')).toBe(true)
    expect(session.cancel()).toBe(true)
    await within(done, 5000, 'the cancelled turn')
    await within(session.idle(), 5000, 'idle')
    const events = await session.events()
    const users = ofType(events, 'user_message').map((e) => e.data.text)
    expect(users).toEqual(['!sleep 2000\n!say never', '!say steered then cancelled'])
    expect(ofType(events, 'error').map((e) => e.data.message)).toEqual([
      'not run: the turn ended before this steering message reached the model',
    ])
  })
})
