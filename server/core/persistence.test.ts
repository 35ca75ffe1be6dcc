/**
 * Sessions survive a restart: a new SessionManager on the same home rebuilds history, counter,
 * model, mode and policy from the event log exactly as the live session had them; the summary
 * on disk and `list()` filters; and the SIGKILL test — a child process killed in the middle of a
 * long turn leaves a log whose loaded prefix holds every event the child saw persisted, from
 * which the session is rebuilt and goes on.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import { OfflineProvider } from '../providers/offline.ts'
import { FileEventStore } from '../store/file-store.ts'
import { eventlogRoot } from '../store/paths.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { ModelRegistry } from './model-registry.ts'
import { heldModel } from './fixtures/scripted-provider.ts'
import type { Session } from './session.ts'
import { TURN_SUMMARY_DELAY_MS } from './summary-writer.ts'
import { initialState, reduce } from './state.ts'
import {
  longTurnPrompt,
  ofType,
  processAlive,
  sleep,
  testEnv,
  textOf,
  until,
  waitForType,
  within,
  type TestEnv,
} from './fixtures/harness.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-persist-')
})
afterEach(async () => {
  await env.cleanup()
})

class AltProvider extends OfflineProvider {
  override models(): readonly string[] {
    return ['offline-alt']
  }
}
const twoModels = (): ModelRegistry => new ModelRegistry([new OfflineProvider(), new AltProvider()])

const turn = (s: Session, prompt: string): Promise<unknown> =>
  within(s.prompt(prompt).done, 6000, `the turn "${prompt.slice(0, 30)}"`)

/** The state summary without the live-only fields. */
const stored = (s: Session): Record<string, unknown> => {
  const { status: _status, last_touched: _touched, ...rest } = s.summary
  return rest
}

describe('reload from disk', () => {
  it('rebuilds history, counter and model exactly; the next event continues the counter', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'alpha\nbeta\n')
    const models = twoModels()
    const live = await env.manager({ models }).create()
    await turn(live, '!call Read {"path":"a.txt"}\n!call Write {"path":"b.txt","content":"new"}')
    await live.setModel('offline-alt')
    await turn(live, '!think hmm\n!say second turn\n!call Nope {}')
    await live.setMode('plan')
    await live.idle()

    const restarted = env.manager({ models })
    const loaded = await restarted.get(live.id)
    expect(loaded).not.toBe(live)
    expect(loaded.status).toBe('idle')
    expect(loaded.messages()).toEqual(live.messages())
    expect(loaded.messages().map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ])
    expect(loaded.lastSeq).toBe(live.lastSeq)
    expect(loaded.model).toBe('offline-alt')
    expect(loaded.mode).toBe('plan')
    expect(loaded.meta).toEqual(live.meta)
    expect(stored(loaded)).toEqual(stored(live))
    expect(await loaded.events()).toEqual(await live.events())
    expect(await restarted.get(live.id)).toBe(loaded)

    const before = loaded.lastSeq
    await turn(loaded, '!say third')
    const next = await loaded.events(before)
    expect(next[0]).toMatchObject({ seq: before + 1, type: 'user_message', turn: 2 })
    expect(next.map((e) => e.seq)).toEqual(next.map((_, i) => before + 1 + i))
    expect(ofType(next, 'turn_start')[0]!.data.model).toBe('offline-alt')
    const all = await new FileEventStore({ root: eventlogRoot(env.home) }).read(live.id)
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1))
  })

  it('keeps the tool allow-list and max_steps, which are fixed at creation', async () => {
    const live = await env.manager().create({ allowedTools: ['Read', 'Write'], maxSteps: 3 })
    const loaded = await env.manager().get(live.id)
    expect(loaded.meta).toMatchObject({ allowed_tools: ['Read', 'Write'], max_steps: 3 })
    expect(loaded.availableTools().map((t) => t.name)).toEqual(['Read', 'Write'])
  })

  it('keeps the approval policy recorded by approval_changed', async () => {
    const live = await env.manager().create()
    await live.setApproval('ask')
    expect(ofType(await live.events(), 'approval_changed')).toHaveLength(1)

    // The session's state is a fold over its events: the policy it recorded must come back.
    const loaded = await env.manager().get(live.id)
    expect(loaded.approval).toBe('ask')
  })

  it('keeps the title recorded by session_renamed: summary on disk, list() and a reload; clearing and no-op renames', async () => {
    const live = await env.manager().create()
    await turn(live, '!say hi\nand a long first prompt')
    await live.rename('  Login\n  bug  ')
    expect(live.summary.title).toBe('Login bug')
    await live.rename('Login bug') // the same title records nothing
    expect(ofType(await live.events(), 'session_renamed').map((e) => e.data)).toEqual([{ title: 'Login bug' }])
    await expect(live.rename('x'.repeat(201))).rejects.toThrow(/at most 200 characters/)

    const restarted = env.manager()
    expect((await restarted.list()).find((s) => s.session_id === live.id)?.title).toBe('Login bug')
    const loaded = await restarted.get(live.id)
    expect(loaded.summary.title).toBe('Login bug')
    await loaded.rename(null)
    expect(loaded.summary).not.toHaveProperty('title')
    expect((await env.manager().list()).find((s) => s.session_id === live.id)).not.toHaveProperty('title')
    expect((await env.manager().get(live.id)).summary).not.toHaveProperty('title')
  })

  it('keeps the approval policy a session was created with', async () => {
    const live = await env.manager().create({ approval: 'deny' })
    const loaded = await env.manager().get(live.id)
    expect(loaded.approval).toBe('deny')
  })

  it('an unknown or malformed id is session_not_found', async () => {
    const m = env.manager()
    await expect(m.get('otter-20250101T000000Z-00000000-0000-4000-8000-000000000000')).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'session_not_found' }),
    )
    await expect(m.get('../../etc')).rejects.toEqual(
      expect.objectContaining({ name: 'ChimeraError', code: 'session_not_found' }),
    )
  })
})

describe('summary and list()', () => {
  it('writes a summary with prompt, success, steps, tool_calls and event_count after each turn', async () => {
    writeFileSync(join(env.cwd, 'a.txt'), 'alpha\n')
    const s = await env.manager().create()
    await turn(s, '!call Read {"path":"a.txt"}')
    // A turn's summary is due after it ends (decision 0495): flush() writes it now.
    await s.flush()
    const file = join(eventlogRoot(env.home), s.id, 'summary.json')
    const read = (): SessionSummary => JSON.parse(readFileSync(file, 'utf8')) as SessionSummary
    let summary = read()
    expect(summary).toMatchObject({
      session_id: s.id,
      prompt: '!call Read {"path":"a.txt"}',
      success: true,
      steps: 2,
      tool_calls: 1,
      event_count: s.lastSeq,
      model: 'offline',
      working_dir: env.cwd,
    })
    expect(typeof summary.ended_at).toBe('string')
    const usage = ofType(await s.events(), 'usage').reduce((n, e) => n + e.data.usage.output_tokens, 0)
    expect(summary.usage?.output_tokens).toBe(usage)

    await turn(s, '!fail nope')
    await s.flush()
    summary = read()
    expect(summary).toMatchObject({
      prompt: '!call Read {"path":"a.txt"}',
      success: false,
      steps: 3,
      tool_calls: 1,
      event_count: s.lastSeq,
    })
    // A restarted manager lists what is on disk.
    const listed = await env.manager().list()
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({
      session_id: s.id,
      success: false,
      steps: 3,
      tool_calls: 1,
      event_count: s.lastSeq,
    })
  })

  it('idle() and flush() wait for the summary writes the closing records of a prompt a stopped process accepted started (what a shutdown or a delete then removes has nothing still writing)', async () => {
    const root = eventlogRoot(env.home)
    const first = new FileEventStore({ root })
    const s1 = await env.manager({ store: first }).create()
    // Accepted, never run: the process stopped (its queue entry is all that is left).
    await first.queuePrompt(s1.id, { message_id: 'msg-left', text: 'left behind', accepted_at: Date.now(), order: 0 })
    await first.close()

    // The restart closes it in the log at once (user_message, turn_start, turn_end, error); each
    // summary write waits here until the gate opens.
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    let held = 0
    const store = new (class extends FileEventStore {
      override async writeSummary(id: string, summary: SessionSummary): Promise<void> {
        held++
        await gate
        return super.writeSummary(id, summary)
      }
    })({ root })
    const s = await env.manager({ store }).get(s1.id)
    const waited: string[] = []
    const idle = s.idle().then(() => waited.push('idle'))
    await until(() => held > 0, 5000, 'a summary write of the closing records')
    const flush = s.flush().then(() => waited.push('flush'))
    // Every promise already settled has run its reactions by the next macrotask.
    await new Promise((r) => setImmediate(r))
    expect(waited).toEqual([])
    open()
    await within(Promise.all([idle, flush]), 5000, 'idle() and flush()')
    expect((await s.events()).map((e) => e.type)).toEqual(['user_message', 'turn_start', 'turn_end', 'error'])
    const summary = JSON.parse(readFileSync(join(root, s.id, 'summary.json'), 'utf8')) as SessionSummary
    expect(summary).toMatchObject({ event_count: 4, success: false })
    await store.close()
  })

  it("turns that end within the summary's delay share one write; flush() and idle() write a due one at once", async () => {
    // Only the session's delay timer is faked: the files are real, and nothing else the turns
    // wait for is a timeout.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      let writes = 0
      const store = new (class extends FileEventStore {
        override async writeSummary(id: string, summary: SessionSummary): Promise<void> {
          writes++
          return super.writeSummary(id, summary)
        }
      })({ root: eventlogRoot(env.home) })
      const s = await env.manager({ store }).create()
      const file = join(eventlogRoot(env.home), s.id, 'summary.json')
      const onDisk = (): number => (JSON.parse(readFileSync(file, 'utf8')) as SessionSummary).event_count ?? 0
      // Three turns, each waited for to its end and saving (`done`): their summary is due, not written.
      for (let i = 0; i < 3; i++) await s.prompt(`!say turn ${i}`).done
      expect(writes).toBe(0)
      vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
      expect(writes).toBe(1)
      await s.flush()
      expect(onDisk()).toBe(s.lastSeq)
      // A due summary is written by flush() without the delay, and then not again.
      await s.prompt('!say once more').done
      expect(writes).toBe(1)
      await s.flush()
      expect(writes).toBe(2)
      expect(onDisk()).toBe(s.lastSeq)
      vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
      expect(writes).toBe(2)
      // idle() writes it too (what an HTTP stream waits for before a turn's terminal record).
      await s.prompt('!say last').done
      await s.idle()
      expect(writes).toBe(3)
      expect(onDisk()).toBe(s.lastSeq)
      await store.close()
    } finally {
      vi.useRealTimers()
    }
  })

  it("every idle() and summarySettled() wait for the write covering the last turn's end; a dropped copy writes none", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      let writes = 0
      let open!: () => void
      let gate = new Promise<void>((r) => (open = r))
      const store = new (class extends FileEventStore {
        override async writeSummary(id: string, summary: SessionSummary): Promise<void> {
          writes++
          await gate
          return super.writeSummary(id, summary)
        }
      })({ root: eventlogRoot(env.home) })
      const s = await env.manager({ store }).create()
      const file = join(eventlogRoot(env.home), s.id, 'summary.json')
      const onDisk = (): number => (JSON.parse(readFileSync(file, 'utf8')) as SessionSummary).event_count ?? 0
      await s.prompt('!say hi').done
      expect(writes).toBe(0)
      // Three callers at once (two streams and a listing's check, say): none is let through while
      // the write is held, and the first begins it without the delay.
      const settled: string[] = []
      const waiters = [
        s.idle().then(() => settled.push('idle 1')),
        s.idle().then(() => settled.push('idle 2')),
        s.summarySettled().then(() => settled.push('summarySettled')),
      ]
      await new Promise((r) => setImmediate(r))
      await new Promise((r) => setImmediate(r))
      expect(writes).toBe(1)
      expect(settled).toEqual([])
      open()
      await Promise.all(waiters)
      expect(settled.sort()).toEqual(['idle 1', 'idle 2', 'summarySettled'])
      expect(onDisk()).toBe(s.lastSeq)
      // Written: a later idle() neither writes again nor waits.
      await s.idle()
      expect(writes).toBe(1)
      // A copy dropped (another instance holds the session now) owes nothing and writes nothing.
      gate = new Promise<void>((r) => (open = r))
      await s.prompt('!say again').done
      s.drop()
      vi.advanceTimersByTime(TURN_SUMMARY_DELAY_MS)
      await s.idle()
      await s.flush()
      expect(writes).toBe(1)
      open()
      await store.close()
    } finally {
      vi.useRealTimers()
    }
  })

  it('filters by model, since and limit, newest first', async () => {
    const models = twoModels()
    const m = env.manager({ models })
    const a = await m.create()
    await sleep(20)
    const since = new Date()
    await sleep(5)
    const b = await m.create({ model: 'offline-alt' })
    await sleep(20)
    const c = await m.create()
    await c.setModel('offline-alt')
    await turn(c, '!say hi')

    const ids = (list: SessionSummary[]): string[] => list.map((x) => x.session_id)
    expect(ids(await m.list())).toEqual([c.id, b.id, a.id])
    expect(ids(await m.list({ model: 'offline' }))).toEqual([a.id])
    expect(ids(await m.list({ model: 'offline-alt' }))).toEqual([c.id, b.id])
    expect(ids(await m.list({ since }))).toEqual([c.id, b.id])
    expect(ids(await m.list({ limit: 2 }))).toEqual([c.id, b.id])
    expect(ids(await m.list({ limit: 1, model: 'offline' }))).toEqual([a.id])
    expect(ids(await m.list({ since: new Date(Date.now() + 60_000) }))).toEqual([])

    // The same from a restarted manager (summaries read from disk).
    const fresh = env.manager({ models })
    expect(ids(await fresh.list())).toEqual([c.id, b.id, a.id])
    expect(ids(await fresh.list({ model: 'offline-alt', since, limit: 1 }))).toEqual([c.id])
  })

  it('a live running session is listed with its current status', async () => {
    const held = heldModel()
    const m = env.manager(held)
    const s = await m.create()
    const { done } = s.prompt('!hold\n!say x')
    await waitForType(s, 'step_start')
    expect((await m.list())[0]).toMatchObject({ session_id: s.id, status: 'running' })
    held.release()
    await within(done, 5000, 'the turn')
    expect((await m.list())[0]).toMatchObject({ session_id: s.id, status: 'idle' })
  })
})

// ---------------------------------------------------------------------------------------------
// SIGKILL in the middle of a turn.

const repo = fileURLToPath(new URL('../..', import.meta.url))
const child = fileURLToPath(new URL('./fixtures/turn-child.ts', import.meta.url))
const WORDS = 3000
const ROUND_MS = 10_000
const children: ChildProcess[] = []
const alive = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null

afterEach(() => {
  for (const c of children) if (alive(c)) c.kill('SIGKILL')
})

interface KilledRun {
  sessionId: string
  reported: AnyEvent[]
  signal: NodeJS.Signals | null
  pid: number
}

/** Start the child, SIGKILL it once it has reported `killAfter` persisted events, wait for its exit. */
function runAndKill(home: string, cwd: string, killAfter: number): Promise<KilledRun> {
  const c = spawn(process.execPath, ['--import', 'tsx', child, home, cwd, String(WORDS)], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  })
  children.push(c)
  let sessionId = ''
  const reported: AnyEvent[] = []
  let stderr = ''
  c.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => c.kill('SIGKILL'), ROUND_MS)
    c.on('message', (m: { session_id?: string; event?: AnyEvent }) => {
      if (m.session_id) sessionId = m.session_id
      if (!m.event) return
      reported.push(m.event)
      if (reported.length === killAfter) c.kill('SIGKILL')
    })
    c.on('error', reject)
    c.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (reported.length < killAfter || !sessionId)
        reject(
          new Error(
            `turn-child ended early (code ${code}, signal ${signal}) after ${reported.length} events: ${stderr}`,
          ),
        )
      else resolve({ sessionId, reported, signal, pid: c.pid ?? -1 })
    })
  })
}

describe('SIGKILL in the middle of a turn', () => {
  it.each([500, 800, 1200])(
    'killed after %i reported events: the log is a prefix holding all of them, and the session goes on',
    async (killAfter) => {
      const { sessionId, reported, signal, pid } = await runAndKill(env.home, env.cwd, killAfter)
      expect(signal).toBe('SIGKILL')
      expect(processAlive(pid)).toBe(false)
      expect(reported.map((e) => e.seq)).toEqual(reported.map((_, i) => i + 1))
      const maxReported = reported.at(-1)!.seq

      // What a fresh store loads: a contiguous prefix 1..k that contains every reported event.
      const loaded = await new FileEventStore({ root: eventlogRoot(env.home) }).load(sessionId)
      expect(loaded).toBeDefined()
      const events = loaded!.events
      const k = events.length
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
      expect(k).toBeGreaterThanOrEqual(maxReported)
      for (const r of reported) {
        const e = events[r.seq - 1]
        if (JSON.stringify(e) !== JSON.stringify(r)) expect(e, `event ${r.seq}`).toEqual(r)
      }
      expect(events.slice(0, 3).map((e) => e.type)).toEqual(['user_message', 'turn_start', 'step_start'])
      expect(events.slice(3).every((e) => e.type === 'text_delta' || e.type === 'reasoning')).toBe(true)
      expect(events.every((e) => e.session_id === sessionId && e.turn === 0)).toBe(true)
      // The chunks came in order, none lost, none repeated.
      const chunks = events.slice(3).map((e) => (e as { data: { text: string } }).data.text)
      expect(chunks).toEqual(chunks.map((_, i) => ` w${i + 1}`))
      const text = textOf(events)

      // The restarted session: its history is the reducer over exactly those events.
      const session = await env.manager().get(sessionId)
      expect(session.lastSeq).toBe(k)
      expect(session.status).toBe('idle')
      const expected = initialState({
        session_id: sessionId,
        model: 'offline',
        mode: 'build',
        created_at: loaded!.meta.created_at,
        working_dir: env.cwd,
      })
      for (const e of events) reduce(expected, e)
      expect(session.messages()).toEqual(expected.messages)
      expect(session.messages().map((m) => [m.role, m.content])).toEqual([
        ['user', longTurnPrompt(WORDS)],
        ['assistant', text],
      ])

      // …and it takes the next turn at k + 1, after closing the interrupted one.
      await session.setModel('offline')
      await within(session.prompt('!say after the crash').done, 6000, 'the turn after the crash')
      const after = await session.events(k)
      expect(after.map((e) => e.type).slice(0, 4)).toEqual(['model_changed', 'turn_end', 'error', 'user_message'])
      expect(after[0]).toMatchObject({ seq: k + 1 })
      expect(after[2]).toMatchObject({
        type: 'error',
        data: { message: 'the turn was interrupted: the process stopped before it finished' },
      })
      expect(after[3]).toMatchObject({ type: 'user_message', turn: 1 })
      expect(after.at(-1)).toMatchObject({ type: 'agent_result', data: { success: true, output: 'after the crash' } })
      const all = await new FileEventStore({ root: eventlogRoot(env.home) }).read(sessionId)
      expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1))
    },
  )

  it('left no child running', () => {
    expect(children.length).toBe(3)
    expect(children.filter(alive)).toEqual([])
    for (const c of children) expect(processAlive(c.pid ?? -1)).toBe(false)
  })
})

afterAll(() => {
  for (const c of children) if (alive(c)) c.kill('SIGKILL')
})
