/**
 * The ReAct loop of one turn, driven through a real session and the offline model: the exact
 * event sequence of a plain turn and of a tool-calling turn, reasoning, max_steps, provider
 * failures (the session keeps working afterwards), and tool failures — unknown tool, bad
 * arguments, a path outside the workspace, a binary file, a command that never exits, a tool
 * that throws — which all become failed tool_results while the turn still ends normally.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AnyEvent } from '../events/event-types.ts'
import type { Session } from './session.ts'
import { builtinTools } from '../tools/registry.ts'
import type { Tool } from '../tools/types.ts'
import type { BashData } from '../tools/bash.ts'
import {
  last,
  ofType,
  processAlive,
  streamShape,
  testEnv,
  textOf,
  turnEvents,
  typesOf,
  until,
  waitForType,
  within,
  type TestEnv,
} from './fixtures/harness.ts'
import { FLUSH_BYTES, FLUSH_MS, PROGRESS_CAP_BYTES } from './event-writer.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-loop-')
})
afterEach(async () => {
  await env.cleanup()
})

const noDirectiveReply = (msg: string): string => `offline model: no provider is configured. You said: ${msg}`
const words = (text: string): number => text.split(' ').length

/** Every event's envelope is well formed and the counters run 1..n without a gap. */
function expectWellFormed(events: AnyEvent[], sessionId: string): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length)
  for (const e of events) {
    expect(e.session_id).toBe(sessionId)
    expect(e.id).toMatch(/^evt-[0-9a-f-]{36}$/)
    expect(Number.isNaN(Date.parse(e.ts))).toBe(false)
  }
}

/** Run one prompt to its end (bounded) and return the outcome and that turn's events. */
async function runPrompt(session: Session, text: string, ms = 8000) {
  const before = session.lastSeq
  const outcome = await within(session.prompt(text).done, ms, `the turn "${text.slice(0, 40)}"`)
  const events = await session.events(before)
  return { outcome, events }
}

describe('a turn with no directive', () => {
  it('emits user_message, turn_start, one step of text, turn_end and agent_result, in order', async () => {
    const session = await env.manager().create()
    const seen: AnyEvent[] = []
    session.subscribe((e) => seen.push(e))
    const { messageId, done } = session.prompt('hello there')
    const outcome = await within(done, 5000, 'the turn')
    const reply = noDirectiveReply('hello there')
    expect(outcome).toEqual({ stop_reason: 'end_turn', success: true, output: reply })

    const events = await session.events()
    expectWellFormed(events, session.id)
    expect(streamShape(events)).toEqual([
      'user_message',
      'turn_start',
      'step_start',
      'text_delta',
      'usage',
      'step_end',
      'turn_end',
      'agent_result',
    ])
    // Word-sized chunks from the model, coalesced by the event writer: at least one event, at most one per word.
    expect(ofType(events, 'text_delta').length).toBeGreaterThanOrEqual(1)
    expect(ofType(events, 'text_delta').length).toBeLessThanOrEqual(words(reply))
    expect(events.every((e) => e.turn === 0)).toBe(true)
    expect(events[0]!.data).toEqual({ message_id: messageId, text: 'hello there' })
    expect(events[1]!.data).toEqual({ prompt: 'hello there', model: 'offline' })
    expect(events[2]!.data).toEqual({ step: 1 })
    expect(ofType(events, 'text_delta').every((e) => e.data.step === 1)).toBe(true)
    expect(textOf(events)).toBe(reply)
    expect(ofType(events, 'step_end')).toMatchObject([{ data: { step: 1, stop_reason: 'end_turn' } }])
    expect(ofType(events, 'turn_end')).toMatchObject([{ data: { stop_reason: 'end_turn', steps: 1 } }])
    const result = last(events)
    expect(result.type).toBe('agent_result')
    if (result.type !== 'agent_result') return
    expect(result.data).toMatchObject({ success: true, output: reply, steps: 1 })
    // The turn's usage is the sum of its usage events.
    const usage = ofType(events, 'usage').map((e) => e.data.usage)
    expect(result.data.usage?.input_tokens).toBe(usage.reduce((n, u) => n + u.input_tokens, 0))
    expect(result.data.usage?.output_tokens).toBe(usage.reduce((n, u) => n + u.output_tokens, 0))

    // Subscribers saw exactly what was persisted, in order.
    expect(seen).toEqual(events)
    expect(session.status).toBe('idle')
    expect(session.messages()).toEqual([
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: reply },
    ])
  })

  it('numbers the second turn 1 and continues the counter', async () => {
    const session = await env.manager().create()
    const first = await runPrompt(session, 'one')
    const second = await runPrompt(session, 'two')
    expect(second.outcome.output).toBe(noDirectiveReply('two'))
    const all = await session.events()
    expectWellFormed(all, session.id)
    expect(all.length).toBe(first.events.length + second.events.length)
    expect(first.events.every((e) => e.turn === 0)).toBe(true)
    expect(second.events.every((e) => e.turn === 1)).toBe(true)
    expect(second.events[0]!.seq).toBe(first.events.at(-1)!.seq + 1)
    expect(streamShape(second.events)).toEqual(streamShape(first.events))
    expect(last(second.events)).toMatchObject({
      type: 'agent_result',
      data: { success: true, output: noDirectiveReply('two') },
    })
    expect(session.messages().map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })
})

describe('a tool-calling turn', () => {
  it('runs the calls of step 1, then step 2 replies one line per call', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'hello\nworld\n')
    const session = await env.manager().create()
    const { outcome, events } = await runPrompt(session, '!call Read {"path":"a.txt"}\n!call Glob {"pattern":"*.txt"}')
    expectWellFormed(events, session.id)
    const types = typesOf(events)
    const step2 = types.lastIndexOf('step_start')
    expect(types.slice(0, step2)).toEqual([
      'user_message',
      'turn_start',
      'step_start',
      'usage',
      'tool_call',
      'tool_call',
      'tool_start',
      'tool_result',
      'tool_start',
      'tool_result',
      'step_end',
    ])
    expect(streamShape(events.slice(step2))).toEqual([
      'step_start',
      'text_delta',
      'usage',
      'step_end',
      'turn_end',
      'agent_result',
    ])

    const calls = ofType(events, 'tool_call')
    const results = ofType(events, 'tool_result')
    expect(calls.map((c) => c.data)).toEqual([
      { call_id: calls[0]!.data.call_id, tool: 'Read', args: { path: 'a.txt' }, step: 1 },
      { call_id: calls[1]!.data.call_id, tool: 'Glob', args: { pattern: '*.txt' }, step: 1 },
    ])
    expect(calls[0]!.data.call_id).not.toBe(calls[1]!.data.call_id)
    expect(results.map((r) => [r.data.call_id, r.data.tool, r.data.ok])).toEqual([
      [calls[0]!.data.call_id, 'Read', true],
      [calls[1]!.data.call_id, 'Glob', true],
    ])
    expect(results[0]!.data.output).toBe('     1\thello\n     2\tworld')
    expect(results[1]!.data.output).toBe('a.txt')
    expect(ofType(events, 'step_end').map((e) => e.data)).toEqual([
      { step: 1, stop_reason: 'tool_use' },
      { step: 2, stop_reason: 'end_turn' },
    ])

    const reply = 'Read ok:      1\thello\nGlob ok: a.txt'
    expect(textOf(events)).toBe(reply)
    expect(ofType(events, 'text_delta').every((e) => e.data.step === 2)).toBe(true)
    expect(ofType(events, 'turn_end')[0]!.data).toEqual({ stop_reason: 'end_turn', steps: 2 })
    expect(last(events)).toMatchObject({ type: 'agent_result', data: { success: true, output: reply, steps: 2 } })
    expect(outcome).toEqual({ stop_reason: 'end_turn', success: true, output: reply })

    const history = session.messages()
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant'])
    expect(history[1]).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: calls.map((c) => ({ call_id: c.data.call_id, tool: c.data.tool, args: c.data.args })),
    })
    expect(history[2]!.tool_result).toMatchObject({ call_id: calls[0]!.data.call_id, tool: 'Read', ok: true })
    expect(history[4]).toEqual({ role: 'assistant', content: reply })
  })

  it('streams !think as reasoning events, kept out of the reply and kept in the history beside it', async () => {
    const session = await env.manager().create()
    const { outcome, events } = await runPrompt(session, '!think let me see now\n!say done')
    const reasoning = ofType(events, 'reasoning')
    expect(reasoning.length).toBeGreaterThanOrEqual(1)
    expect(reasoning.length).toBeLessThanOrEqual(4)
    expect(reasoning.map((e) => e.data.text).join('')).toBe('let me see now')
    expect(reasoning.every((e) => e.data.step === 1)).toBe(true)
    const types = typesOf(events)
    expect(types.lastIndexOf('reasoning')).toBeLessThan(types.indexOf('text_delta'))
    expect(types.indexOf('step_start')).toBeLessThan(types.indexOf('reasoning'))
    expect(textOf(events)).toBe('done')
    expect(outcome.output).toBe('done')
    expect(last(events)).toMatchObject({ type: 'agent_result', data: { success: true, output: 'done' } })
    expect(session.messages().at(-1)).toEqual({
      role: 'assistant',
      content: 'done',
      reasoning: [{ text: 'let me see now' }],
    })
  })

  it('stops at max_steps: stop_reason max_steps and an unsuccessful agent_result', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'hello\n')
    const session = await env.manager().create({ maxSteps: 1 })
    const { outcome, events } = await runPrompt(session, '!call Read {"path":"a.txt"}')
    expect(outcome.stop_reason).toBe('max_steps')
    expect(outcome.success).toBe(false)
    expect(ofType(events, 'step_start')).toHaveLength(1)
    expect(ofType(events, 'tool_result')).toMatchObject([{ data: { tool: 'Read', ok: true } }])
    expect(typesOf(events).slice(-3)).toEqual(['step_end', 'turn_end', 'agent_result'])
    expect(ofType(events, 'turn_end')[0]!.data).toEqual({ stop_reason: 'max_steps', steps: 1 })
    expect(last(events)).toMatchObject({ type: 'agent_result', data: { success: false, steps: 1 } })
    expect(session.status).toBe('idle')
  })
})

describe('provider failure', () => {
  it('ends the turn with turn_end error and a terminal error event; the session goes on', async () => {
    const session = await env.manager().create()
    const { outcome, events } = await runPrompt(session, '!say partial words\n!fail the model broke')
    expect(outcome).toEqual({ stop_reason: 'error', success: false, output: 'the model broke', source: 'provider' })
    expect(typesOf(events).slice(-3)).toEqual(['step_end', 'turn_end', 'error'])
    expect(ofType(events, 'step_end')[0]!.data).toEqual({ step: 1, stop_reason: 'error' })
    expect(ofType(events, 'turn_end')[0]!.data).toEqual({ stop_reason: 'error', steps: 1 })
    expect(last(events)).toMatchObject({ type: 'error', data: { message: 'the model broke', source: 'provider' } })
    expect(ofType(events, 'agent_result')).toHaveLength(0)
    expect(textOf(events)).toBe('partial words')
    expect(session.status).toBe('idle')

    const next = await runPrompt(session, '!say recovered')
    expect(next.outcome).toEqual({ stop_reason: 'end_turn', success: true, output: 'recovered' })
    expect(next.events.every((e) => e.turn === 1)).toBe(true)
    expect(last(next.events)).toMatchObject({ type: 'agent_result', data: { success: true, output: 'recovered' } })
    expectWellFormed(await session.events(), session.id)
  })

  it('treats a malformed directive (bad !call JSON) as a provider error, not a crash', async () => {
    const session = await env.manager().create()
    const { outcome, events } = await runPrompt(session, '!call Read {not json')
    expect(outcome.stop_reason).toBe('error')
    expect(last(events)).toMatchObject({ type: 'error', data: { source: 'provider' } })
    expect(ofType(events, 'error')[0]!.data.message).toMatch(/!call Read: arguments are not valid JSON/)
    expect((await runPrompt(session, '!say ok')).outcome.success).toBe(true)
  })
})

describe('tool failures never escape the loop', () => {
  /** One failed tool_result for the single call, and the turn ended by a successful agent_result. */
  function expectFailedCall(events: AnyEvent[], tool: string, message: RegExp): string {
    const results = ofType(events, 'tool_result')
    expect(results).toHaveLength(1)
    const r = results[0]!
    expect(r.data.tool).toBe(tool)
    expect(r.data.ok).toBe(false)
    expect(r.data.output).toBeUndefined()
    expect(r.data.error).toMatch(message)
    expect(r.data.call_id).toBe(ofType(events, 'tool_call')[0]!.data.call_id)
    expect(typesOf(events).slice(-2)).toEqual(['turn_end', 'agent_result'])
    const result = last(events)
    expect(result).toMatchObject({
      type: 'agent_result',
      data: { success: true, output: `${tool} error: ${r.data.error!.split('\n')[0]}` },
    })
    return r.data.error!
  }

  it('unknown tool', async () => {
    const session = await env.manager().create()
    const { outcome, events } = await runPrompt(session, '!call Nope {"x":1}')
    const error = expectFailedCall(events, 'Nope', /unknown tool "Nope"/)
    expect(error).toContain('Read')
    expect(outcome.stop_reason).toBe('end_turn')
  })

  it('malformed arguments', async () => {
    const session = await env.manager().create()
    const { events } = await runPrompt(session, '!call Read {"path": 5}')
    expectFailedCall(events, 'Read', /invalid arguments for Read: path: .*expected string/)
  })

  it('missing required and unexpected arguments', async () => {
    const session = await env.manager().create()
    const { events } = await runPrompt(session, '!call Write {"content":"x","mode":"0777"}')
    const error = expectFailedCall(events, 'Write', /invalid arguments for Write/)
    expect(error).toMatch(/path/)
  })

  it('a path outside the workspace: a sandbox_violation event and a failed result', async () => {
    const outsideFile = join(env.base, 'secret.txt')
    writeFileSync(outsideFile, 'secret\n')
    const session = await env.manager().create()
    const { events } = await runPrompt(session, `!call Read ${JSON.stringify({ path: outsideFile })}`)
    const error = expectFailedCall(events, 'Read', /sandbox violation \(workspace-write\)/)
    expect(error).toMatch(/outside the workspace/)
    expect(error).not.toContain('secret\n')
    const violations = ofType(events, 'sandbox_violation')
    expect(violations.map((v) => v.data)).toEqual([{ tool: 'Read', path: outsideFile, mode: 'workspace-write' }])
    const types = typesOf(events)
    expect(types.indexOf('sandbox_violation')).toBeGreaterThan(types.indexOf('tool_call'))
    expect(types.indexOf('sandbox_violation')).toBeLessThan(types.indexOf('tool_result'))
  })

  it('a relative path that climbs out of the workspace is a violation too', async () => {
    writeFileSync(join(env.base, 'secret.txt'), 'secret\n')
    const session = await env.manager().create()
    const { events } = await runPrompt(session, '!call Read {"path":"../secret.txt"}')
    expectFailedCall(events, 'Read', /sandbox violation/)
    expect(ofType(events, 'sandbox_violation')).toHaveLength(1)
  })

  it('a binary file to Read', async () => {
    writeFileSync(join(env.cwd, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x00, 0xff]))
    const session = await env.manager().create()
    const { events } = await runPrompt(session, '!call Read {"path":"blob.bin"}')
    expectFailedCall(events, 'Read', /binary/)
  })

  it('a missing file', async () => {
    const session = await env.manager().create()
    const { events } = await runPrompt(session, '!call Read {"path":"nope.txt"}')
    expectFailedCall(events, 'Read', /not found: nope\.txt/)
  })

  it('a command that never exits is killed at its timeout and fails within seconds', async () => {
    const session = await env.manager().create()
    const started = Date.now()
    const { events } = await runPrompt(session, '!call Bash {"command":"sleep 30","timeout_ms":300}', 8000)
    expect(Date.now() - started).toBeLessThan(6000)
    expectFailedCall(events, 'Bash', /timed out after 300 ms/)
    const data = ofType(events, 'tool_result')[0]!.data.data as BashData
    expect(data.timedOut).toBe(true)
    if (typeof data.pid === 'number') {
      const pid = data.pid
      await until(() => !processAlive(pid, true), 5000, `process group ${pid} to be gone`)
    }
  })

  it('a tool that throws becomes a failed result naming the tool', async () => {
    const tools = builtinTools()
    const crashing: Tool = {
      name: 'Read',
      permissionKey: (a: { path: string }) => a.path,
      run: async () => Promise.reject(new Error('disk on fire')),
    }
    tools.set('Read', crashing)
    const session = await env.manager({ tools }).create()
    const { events } = await runPrompt(session, '!call Read {"path":"a.txt"}')
    expectFailedCall(events, 'Read', /^Read failed: disk on fire$/)
  })

  it('a tool whose permission key throws still yields a failed result and an agent_result', async () => {
    const tools = builtinTools()
    const crashing: Tool = {
      name: 'Read',
      permissionKey: () => {
        throw new Error('cannot normalise')
      },
      run: async () => ({ ok: true, output: 'never' }),
    }
    tools.set('Read', crashing)
    const session = await env.manager({ tools }).create()
    const { events } = await runPrompt(session, '!call Read {"path":"a.txt"}')
    // Every tool_call must get its tool_result, or the history the model sees is broken.
    expect(ofType(events, 'tool_result').map((r) => r.data.call_id)).toEqual(
      ofType(events, 'tool_call').map((c) => c.data.call_id),
    )
    expectFailedCall(events, 'Read', /cannot normalise/)
  })

  it('several failures in one step each get their own result, in call order', async () => {
    const session = await env.manager().create()
    const { events } = await runPrompt(
      session,
      '!call Nope {}\n!call Read {"path": 5}\n!call Read {"path":"missing.txt"}',
    )
    const calls = ofType(events, 'tool_call')
    const results = ofType(events, 'tool_result')
    expect(results.map((r) => r.data.call_id)).toEqual(calls.map((c) => c.data.call_id))
    expect(results.every((r) => !r.data.ok)).toBe(true)
    const reply = textOf(turnEvents(events, 0).filter((e) => e.type === 'text_delta'))
    expect(reply.split('\n')).toHaveLength(3)
    expect(reply.split('\n')[0]).toMatch(/^Nope error: unknown tool/)
    expect(last(events)).toMatchObject({ type: 'agent_result', data: { success: true } })
  })
})

describe('cancel closes every call', () => {
  it('two calls, cancelled during the first: every tool_call has its tool_result and the history stays well-formed', async () => {
    const session = await env.manager({ sandbox: 'danger-full-access' }).create()
    const { done } = session.prompt('!call Bash {"command":"sleep 30"}\n!call Read {"path":"never-read.txt"}')
    await waitForType(session, 'tool_start')
    expect(session.cancel()).toBe(true)
    const outcome = await within(done, 8000, 'the cancelled turn')
    expect(outcome.stop_reason).toBe('cancelled')
    const events = await session.events()
    const calls = ofType(events, 'tool_call')
    const results = ofType(events, 'tool_result')
    expect(calls).toHaveLength(2)
    expect(results.map((r) => r.data.call_id)).toEqual(calls.map((c) => c.data.call_id))
    expect(results[0]!.data).toMatchObject({ tool: 'Bash', ok: false })
    expect(results[1]!.data).toMatchObject({ tool: 'Read', ok: false, error: 'cancelled' })
    // The call that never ran has no tool_start.
    expect(ofType(events, 'tool_start').map((e) => e.data.call_id)).toEqual([calls[0]!.data.call_id])
    expect(typesOf(events).slice(-3)).toEqual(['step_end', 'turn_end', 'cancelled'])
    const history = session.messages()
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool'])
    expect(history.slice(2).map((m) => m.tool_result?.call_id)).toEqual(calls.map((c) => c.data.call_id))
  })
})

describe('bounded storage', () => {
  it('a flood of Bash output persists a bounded number of progress events and bytes, the last marked truncated', async () => {
    const session = await env.manager({ sandbox: 'danger-full-access' }).create()
    const { events } = await runPrompt(session, '!call Bash {"command":"seq 1 400000"}', 30_000)
    const progress = ofType(events, 'tool_progress')
    const bytes = progress.reduce((n, e) => n + (e.data.stdout?.length ?? 0) + (e.data.stderr?.length ?? 0), 0)
    // seq 1 400000 writes 2.7 MB; the log keeps at most the progress cap (plus one chunk).
    expect(bytes).toBeLessThanOrEqual(PROGRESS_CAP_BYTES + 128 * 1024)
    // Chunks are merged up to FLUSH_BYTES, or for FLUSH_MS after a write: at most one event per
    // FLUSH_BYTES of output and one per FLUSH_MS the output lasted (a loaded machine delivers the
    // output in slower, smaller chunks, each its own event once FLUSH_MS has passed).
    const lasted = Date.parse(progress.at(-1)!.ts) - Date.parse(progress[0]!.ts)
    expect(progress.length).toBeLessThanOrEqual(
      Math.ceil(PROGRESS_CAP_BYTES / FLUSH_BYTES) + Math.ceil(lasted / FLUSH_MS) + 2,
    )
    expect(progress.at(-1)!.data.truncated).toBe(true)
    expect(progress.filter((e) => e.data.truncated)).toHaveLength(1)
    expect(progress.every((e) => e.data.tool === 'Bash')).toBe(true)
    const result = ofType(events, 'tool_result')[0]!
    expect(result.data.ok).toBe(true)
    expect(result.data.output).toMatch(/400000\n$/)
  }, 40_000)
})

describe('hostile directives', () => {
  it('!sleep past the timer range is a clear provider error, not an instant return', async () => {
    const session = await env.manager().create()
    const { outcome } = await runPrompt(session, '!sleep 99999999999999999999')
    expect(outcome).toMatchObject({ stop_reason: 'error', source: 'provider' })
    expect(outcome.output).toMatch(/!sleep needs a number of milliseconds from 0 to 3600000/)
  })

  it('!call arguments nested past the depth limit are refused clearly; the turn ends normally', async () => {
    const session = await env.manager().create()
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`
    const { outcome } = await runPrompt(session, `!call Read ${deep}`)
    expect(outcome).toMatchObject({ stop_reason: 'error', source: 'provider' })
    expect(outcome.output).toMatch(/nested deeper than 64 levels/)
  })
})
