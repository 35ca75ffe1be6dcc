/**
 * The three ACP event maps (v1, otter, ferret) have a row for every canonical event type, and
 * every message they produce — for a sample of every type and for a real session's log —
 * validates against its wire's generated schema. Each row is a pure function of one event:
 * mapping a log from any cursor gives exactly the tail of the full mapping.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionNotificationSchema } from '../../generated/acp/v1-schema.gen.ts'
import { FerretSessionUpdateSchema, OtterSessionUpdateParamsSchema } from '../../generated/acp/seed.gen.ts'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import { checkEventData, EVENT_TYPES, type AnyEvent, type EventData, type EventType } from '../events/event-types.ts'
import {
  PROGRESS_TAIL_CHARS,
  V1_EVENT_MAP,
  listedTitle,
  sessionTitle,
  toV1Updates,
  type V1MapContext,
} from './v1/event-map.ts'
import { configOptions } from './v1/session-config.ts'
import { OTTER_EVENT_MAP, toOtterParams } from './seed/otter-map.ts'
import { FERRET_EVENT_MAP, toFerretParams } from './seed/ferret-map.ts'
import { FerretSessionUpdateParamsSchema } from '../../generated/acp/v1-methods.gen.ts'
import { toFerretUpdate } from './v1/ferret-updates.ts'

const SID = 'ferret-20260101T000000Z-00000000-0000-0000-0000-000000000000'
const usage = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 2, cache_write_tokens: 1, cost_usd: 0.01 }
const SAMPLES: { [T in EventType]: EventData<T> } = {
  user_message: { message_id: 'm1', text: 'hello' },
  turn_start: { prompt: 'hello', model: 'offline' },
  step_start: { step: 1 },
  text_delta: { text: 'hi', message_id: 'm2', step: 1 },
  reasoning: { text: 'thinking', step: 1 },
  tool_call: { call_id: 'c1', tool: 'Edit', args: { path: 'a.txt', old_string: 'a', new_string: 'b' } },
  tool_start: { call_id: 'c1', tool: 'Edit', args: { path: 'a.txt' } },
  tool_progress: { call_id: 'c2', tool: 'Bash', stdout: 'out', stderr: 'err' },
  tool_result: { call_id: 'c1', tool: 'Edit', ok: true, output: 'edited', duration_ms: 3 },
  permission_request: {
    request_id: 'p1',
    call_id: 'c1',
    tool: 'Edit',
    args: { path: 'a.txt' },
    risk: 'medium',
    options: ['allow', 'always', 'deny', 'never'],
  },
  permission_reply: { request_id: 'p1', decision: 'allow', source: 'acp' },
  sandbox_violation: { tool: 'Write', path: '/etc/x', mode: 'workspace-write' },
  usage: { usage, context_window: 200000 },
  step_end: { step: 1, stop_reason: 'end_turn' },
  turn_end: { stop_reason: 'max_tokens', steps: 1 },
  agent_result: { success: true, output: 'hi', usage, steps: 1 },
  error: { message: 'boom', name: 'ProviderError', source: 'provider' },
  cancelled: { partial_output: 'h', reason: 'user' },
  compaction: { summary: 's', messages_before: 4, messages_after: 1 },
  steering: { text: 'also' },
  model_changed: { old: 'offline', new: 'offline' },
  mode_changed: { old: 'build', new: 'plan' },
  approval_changed: { old: 'ask', new: 'allow' },
  notice: { level: 'warning', text: 'careful' },
  file_edit: { path: '/w/a.txt', diff: '--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n' },
  file_open: { path: '/w/a.txt', line: 3 },
  undo: { turns: 1, files_restored: 1, remaining: 0, files: ['/w/a.txt'], output: '/undo: rewound 1 turn' },
  redo: { turns: 1, files_restored: 1, remaining: 0, output: '/redo: replayed 1 turn' },
  plan: {
    call_id: 'c3',
    entries: [
      { content: 'read the code', priority: 'high', status: 'completed' },
      { content: 'fix it', priority: 'medium', status: 'in_progress' },
    ],
  },
  session_renamed: { title: 'Login bug' },
}

const sample = (type: EventType, seq: number): AnyEvent =>
  ({
    seq,
    id: `evt-00000000-0000-0000-0000-00000000000${seq % 10}`,
    session_id: SID,
    type,
    turn: type === 'turn_start' ? 0 : 1,
    ts: '2026-01-01T00:00:00.000Z',
    data: checkEventData(type, SAMPLES[type]),
  }) as AnyEvent

const ctx = (cwd: string): V1MapContext => ({
  cwd,
  configOptions: (m, mode) => configOptions(['offline'], m, mode),
  model: () => 'offline',
  mode: () => 'build',
})

describe('ACP event maps', () => {
  it('have a row for every event type', () => {
    for (const map of [V1_EVENT_MAP, OTTER_EVENT_MAP, FERRET_EVENT_MAP])
      expect(Object.keys(map).sort()).toEqual([...EVENT_TYPES].sort())
  })

  it('map a sample of every type to messages that validate on their wire', () => {
    const shown = { v1: new Set<string>(), otter: new Set<string>(), ferret: new Set<string>() }
    EVENT_TYPES.forEach((type, i) => {
      const e = sample(type, i + 1)
      for (const update of toV1Updates(e, ctx('/w'))) {
        const r = SessionNotificationSchema.safeParse({ sessionId: SID, update })
        expect(r.success, `${type} → ${JSON.stringify(update)}: ${r.error?.message}`).toBe(true)
        shown.v1.add(update.sessionUpdate)
      }
      const o = toOtterParams(e, i + 1)
      if (o) {
        const r = OtterSessionUpdateParamsSchema.safeParse(o)
        expect(r.success, `${type} → ${JSON.stringify(o)}: ${r.error?.message}`).toBe(true)
        expect(o.eventId).toBe(i + 1)
        shown.otter.add(o.update.sessionUpdate)
      }
      const f = toFerretParams(e, i + 1)
      if (f) {
        const r = FerretSessionUpdateSchema.safeParse(f)
        expect(r.success, `${type} → ${JSON.stringify(f)}: ${r.error?.message}`).toBe(true)
        expect(f.eventId).toBe(i + 1)
        shown.ferret.add(f.kind)
      }
    })
    // docs/zed.md: five kinds (+ 001's four); docs/zed.md: twelve kinds.
    expect([...shown.otter].sort()).toEqual([
      'agent_message_chunk',
      'error',
      'permission_request',
      'stepEnd',
      'stepStart',
      'tool_call',
      'tool_result',
      'turnEnd',
      'usage_update',
    ])
    expect([...shown.ferret].sort()).toEqual(
      [
        'agent_message_chunk',
        'approval_changed',
        'cost_update',
        'file_edit',
        'file_open',
        'notice',
        'permission_request',
        'sandbox_violation',
        'tool_call_end',
        'tool_call_progress',
        'tool_call_start',
        'turn_end',
      ].sort(),
    )
    expect([...shown.v1].sort()).toEqual([
      'agent_message_chunk',
      'agent_thought_chunk',
      'config_option_update',
      'current_mode_update',
      'plan',
      'session_info_update',
      'tool_call',
      'tool_call_update',
      'usage_update',
      'user_message_chunk',
    ])
  })

  it('map exactly the five ferret IDE kinds to _ferret/session/update, with the event data as is', () => {
    const kinds: string[] = []
    EVENT_TYPES.forEach((type, i) => {
      const u = toFerretUpdate(sample(type, i + 1))
      if (!u) return
      const r = FerretSessionUpdateParamsSchema.safeParse(u)
      expect(r.success, `${type} → ${JSON.stringify(u)}: ${r.error?.message}`).toBe(true)
      expect(u).toEqual({ sessionId: SID, eventId: i + 1, kind: type, data: SAMPLES[type] })
      kinds.push(u.kind)
    })
    expect(kinds.sort()).toEqual(['approval_changed', 'file_edit', 'file_open', 'notice', 'sandbox_violation'])
  })

  it('tells every dialect about a notice (an unconfined Bash warning must reach each client)', () => {
    const e = sample('notice', 7)
    expect(toV1Updates(e, ctx('/w'))).toMatchObject([
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '\n[warning] careful\n' } },
    ])
    expect(toOtterParams(e, 7)).toMatchObject({
      eventId: 7,
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '\n[warning] careful\n' } },
    })
    expect(toFerretParams(e, 7)).toMatchObject({ eventId: 7, kind: 'notice', level: 'warning', text: 'careful' })
  })

  it('names the session at its first turn only (session_info_update: title and updatedAt)', () => {
    const first = {
      ...sample('turn_start', 4),
      turn: 0,
      data: { prompt: '\n  fix the login bug  \nand more', model: 'offline' },
    } as AnyEvent
    expect(toV1Updates(first, ctx('/w'))).toEqual([
      {
        sessionUpdate: 'session_info_update',
        title: 'fix the login bug',
        updatedAt: '2026-01-01T00:00:00.000Z',
        _meta: { 'chimera/eventId': 4 },
      },
    ])
    expect(toV1Updates({ ...first, turn: 1 } as AnyEvent, ctx('/w'))).toEqual([])
    expect(sessionTitle('x'.repeat(300))).toHaveLength(100)
  })

  it('shows a rename as session_info_update with the new title (a cleared one: the derived title), and a given title wins at the first turn', () => {
    const renamed = sample('session_renamed', 5)
    expect(toV1Updates(renamed, ctx('/w'))).toEqual([
      {
        sessionUpdate: 'session_info_update',
        title: 'Login bug',
        updatedAt: '2026-01-01T00:00:00.000Z',
        _meta: { 'chimera/eventId': 5 },
      },
    ])
    const cleared = { ...renamed, data: { title: null } } as AnyEvent
    expect(toV1Updates(cleared, { ...ctx('/w'), title: () => 'fix the login bug' })).toMatchObject([
      { sessionUpdate: 'session_info_update', title: 'fix the login bug' },
    ])
    expect(toV1Updates(cleared, ctx('/w'))).toMatchObject([{ sessionUpdate: 'session_info_update', title: null }])
    const first = { ...sample('turn_start', 4), turn: 0 } as AnyEvent
    expect(toV1Updates(first, { ...ctx('/w'), title: () => 'Login bug' })).toMatchObject([
      { sessionUpdate: 'session_info_update', title: 'Login bug' },
    ])
    expect(listedTitle({ title: 'Login bug', prompt: 'fix it' })).toBe('Login bug')
    expect(listedTitle({ prompt: '\n fix it \nmore' })).toBe('fix it')
    expect(listedTitle({ prompt: '' })).toBeUndefined()
    expect(toOtterParams(renamed, 1)).toBeUndefined()
    expect(toFerretParams(renamed, 1)).toBeUndefined()
  })

  it('shows a plan as the complete v1 plan, and nothing extra in the seed dialects (the tool call carries it)', () => {
    const e = sample('plan', 9)
    expect(toV1Updates(e, ctx('/w'))).toEqual([
      {
        sessionUpdate: 'plan',
        entries: [
          { content: 'read the code', priority: 'high', status: 'completed' },
          { content: 'fix it', priority: 'medium', status: 'in_progress' },
        ],
        _meta: { 'chimera/eventId': 9, 'chimera/toolCallId': 'c3' },
      },
    ])
    expect(toOtterParams(e, 1)).toBeUndefined()
    expect(toFerretParams(e, 1)).toBeUndefined()
  })

  it('shows an edit as a diff with absolute paths, and keeps it when the edit completes', () => {
    const [call] = toV1Updates(sample('tool_call', 1), ctx('/w'))
    expect(call).toMatchObject({
      sessionUpdate: 'tool_call',
      kind: 'edit',
      locations: [{ path: '/w/a.txt' }],
      content: [{ type: 'diff', path: '/w/a.txt', oldText: 'a', newText: 'b' }],
    })
    const [done] = toV1Updates(sample('tool_result', 2), ctx('/w'))
    expect(done).toMatchObject({ sessionUpdate: 'tool_call_update', status: 'completed' })
    expect(done).not.toHaveProperty('content')
  })
  it('shows a shell call to a terminal_output client (Zed) as a display terminal: terminal content, terminal_info, terminal_output chunks, terminal_exit with the exit code', () => {
    const zed: V1MapContext = { ...ctx('/w'), terminalOutput: true, outputs: new Map() }
    const ev = (type: EventType, seq: number, data: unknown): AnyEvent =>
      ({ ...sample(type, seq), data: checkEventData(type, data as never) }) as AnyEvent
    const updates = [
      ...toV1Updates(ev('tool_call', 1, { call_id: 'b1', tool: 'Bash', args: { command: 'make' } }), zed),
      ...toV1Updates(ev('tool_progress', 2, { call_id: 'b1', tool: 'Bash', stdout: 'one\n' }), zed),
      ...toV1Updates(ev('tool_progress', 3, { call_id: 'b1', tool: 'Bash', stderr: 'two\n' }), zed),
      ...toV1Updates(
        ev('tool_result', 4, {
          call_id: 'b1',
          tool: 'Bash',
          ok: false,
          error: 'command exited with code 2',
          data: { exitCode: 2, signal: null },
        }),
        zed,
      ),
    ]
    expect(updates).toMatchObject([
      {
        sessionUpdate: 'tool_call',
        kind: 'execute',
        title: 'make',
        content: [{ type: 'terminal', terminalId: 'b1' }],
        _meta: { terminal_info: { terminal_id: 'b1', cwd: '/w' } },
      },
      { sessionUpdate: 'tool_call_update', _meta: { terminal_output: { terminal_id: 'b1', data: 'one\n' } } },
      { sessionUpdate: 'tool_call_update', _meta: { terminal_output: { terminal_id: 'b1', data: 'two\n' } } },
      {
        sessionUpdate: 'tool_call_update',
        status: 'failed',
        content: [{ type: 'terminal', terminalId: 'b1' }],
        _meta: { terminal_exit: { terminal_id: 'b1', exit_code: 2, signal: null } },
      },
    ])
    // Progress never replaces the terminal with text; every frame is valid v1.
    expect(updates[1]).not.toHaveProperty('content')
    for (const update of updates)
      expect(SessionNotificationSchema.safeParse({ sessionId: SID, update }).success).toBe(true)
  })

  it('streams a shell call to other clients as text whose every update holds all output so far (content replaces the card)', () => {
    const c: V1MapContext = { ...ctx('/w'), outputs: new Map() }
    const ev = (type: EventType, seq: number, data: unknown): AnyEvent =>
      ({ ...sample(type, seq), data: checkEventData(type, data as never) }) as AnyEvent
    const [call] = toV1Updates(ev('tool_call', 1, { call_id: 'b1', tool: 'Bash', args: { command: 'make' } }), c)
    expect(call).not.toHaveProperty('content')
    toV1Updates(ev('tool_progress', 2, { call_id: 'b1', tool: 'Bash', stdout: 'one\n' }), c)
    const [second] = toV1Updates(ev('tool_progress', 3, { call_id: 'b1', tool: 'Bash', stdout: 'two\n' }), c)
    expect(second).toMatchObject({ content: [{ type: 'content', content: { type: 'text', text: 'one\ntwo\n' } }] })
    toV1Updates(ev('tool_result', 4, { call_id: 'b1', tool: 'Bash', ok: true, output: 'one\ntwo\n' }), c)
    expect(c.outputs?.size).toBe(0)
    // A long run's updates carry a bounded tail, not all output so far.
    const big = 'x'.repeat(PROGRESS_TAIL_CHARS)
    toV1Updates(ev('tool_progress', 5, { call_id: 'b2', tool: 'Bash', stdout: big }), c)
    const [tail] = toV1Updates(ev('tool_progress', 6, { call_id: 'b2', tool: 'Bash', stdout: 'end' }), c)
    expect((tail as { content: { content: { text: string } }[] }).content[0]!.content.text).toHaveLength(
      PROGRESS_TAIL_CHARS,
    )
    // A replayed history skips the progress of calls whose result it holds.
    const replay: V1MapContext = { ...ctx('/w'), outputs: new Map(), finished: new Set(['b1']) }
    expect(toV1Updates(ev('tool_progress', 2, { call_id: 'b1', tool: 'Bash', stdout: 'one\n' }), replay)).toEqual([])
  })
})

describe('ACP event maps over a real session', () => {
  let env: TestEnv
  beforeEach(() => {
    env = testEnv('chimera-acpmap-')
  })
  afterEach(async () => {
    await env.cleanup()
  })

  it('map the same from every cursor as from the start', async () => {
    const session = await env.manager({ sandbox: 'danger-full-access' }).create()
    await within(
      session.prompt('!think first\n!say hi\n!call Bash {"command":"echo out; echo err >&2"}\n!call Nope {}').done,
      8000,
      'the turn',
    )
    await within(session.prompt('/undo').done, 5000, 'the undo')
    const events = await session.events()
    const all = (list: AnyEvent[]) =>
      list.map((e) => [toV1Updates(e, ctx(session.meta.cwd)), toOtterParams(e, e.seq), toFerretParams(e, e.seq)])
    const full = all(events)
    for (let k = 0; k < events.length; k += 3) expect(all(await session.events(k))).toEqual(full.slice(k))
    for (const [v1, o, f] of full) {
      for (const update of v1 as ReturnType<typeof toV1Updates>)
        expect(SessionNotificationSchema.safeParse({ sessionId: session.id, update }).success).toBe(true)
      if (o) expect(OtterSessionUpdateParamsSchema.safeParse(o).success).toBe(true)
      if (f) expect(FerretSessionUpdateSchema.safeParse(f).success).toBe(true)
    }
  })
})
