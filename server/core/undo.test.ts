/**
 * File-level undo/redo through the core: a real SessionManager with the snapshot store as its
 * history, the offline model's `!call Write/Edit/Bash` changing files over several turns, and
 * `/undo`, `/undo N`, `/undo --steps N`, `/redo` with the document's reply lines; messages and
 * files rewinding together, a new turn dropping the redo branch, a restart in between, Bash
 * changes (not tracked), the 25 MiB rule, files the agent did not write, and teardown.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { snapshotHistory } from '../store/snapshots.ts'
import { MemoryEventStore } from '../store/memory-store.ts'
import type { EventStore } from '../store/types.ts'
import type { AnyEvent } from '../events/event-types.ts'
import type { SessionManager } from './manager.ts'
import type { Session } from './session.ts'
import { ofType, testEnv, within, type TestEnv } from './fixtures/harness.ts'
import { trackedTools } from './fixtures/tracked-tools.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-undo-')
})
afterEach(async () => {
  await env.cleanup()
})

const manager = (maxFileBytes?: number, store?: EventStore): SessionManager =>
  env.manager({
    ...(store ? { store } : {}),
    tools: trackedTools(),
    history: snapshotHistory({ home: env.home, env: {}, ...(maxFileBytes ? { maxFileBytes } : {}) }),
  })

/** Send a prompt, wait for its turn or command, return the reply line. */
async function send(s: Session, text: string): Promise<string> {
  return (await within(s.prompt(text).done, 15_000, JSON.stringify(text))).output
}

const write = (path: string, content: string) => `!call Write ${JSON.stringify({ path, content })}`
const edit = (path: string, from: string, to: string) =>
  `!call Edit ${JSON.stringify({ path, old_string: from, new_string: to })}`
const bash = (command: string) => `!call Bash ${JSON.stringify({ command })}`
const file = (rel: string): string | null =>
  existsSync(join(env.cwd, rel)) ? readFileSync(join(env.cwd, rel), 'utf8') : null
const files = (...rels: string[]) => Object.fromEntries(rels.map((r) => [r, file(r)]))
const userTexts = (s: Session) =>
  s
    .messages()
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
const snapDir = (id: string) => join(env.home, 'snapshots', id)

describe('file-level undo and redo through the core', () => {
  it('the walk-through: files created, edited, restored and replayed, with the reply lines', async () => {
    const s = await manager().create()
    expect(await send(s, `${write('a.txt', 'alpha\n')}\n${write('b.txt', 'bravo\n')}`)).toBe(
      'Write ok: Created a.txt (6 bytes)\nWrite ok: Created b.txt (6 bytes)',
    )
    expect(await send(s, `${edit('a.txt', 'alpha', 'ALPHA')}\n${write('c.txt', 'charlie\n')}`)).toMatch(
      /^Edit ok: Edited a\.txt/,
    )
    expect(await send(s, '!say nothing to change')).toBe('nothing to change')
    expect(files('a.txt', 'b.txt', 'c.txt')).toEqual({ 'a.txt': 'ALPHA\n', 'b.txt': 'bravo\n', 'c.txt': 'charlie\n' })

    expect(await send(s, '/undo')).toBe('/undo: rewound 1 turn, 0 files restored (2 remaining)')
    expect(userTexts(s)).toHaveLength(2)
    expect(await send(s, '/undo')).toBe('/undo: rewound 1 turn, 2 files restored (1 remaining)')
    expect(files('a.txt', 'b.txt', 'c.txt')).toEqual({ 'a.txt': 'alpha\n', 'b.txt': 'bravo\n', 'c.txt': null })
    expect(userTexts(s)).toHaveLength(1)

    expect(await send(s, '/redo')).toBe('/redo: replayed 1 turn, 2 files restored (1 remaining)')
    expect(files('a.txt', 'b.txt', 'c.txt')).toEqual({ 'a.txt': 'ALPHA\n', 'b.txt': 'bravo\n', 'c.txt': 'charlie\n' })

    expect(await send(s, '/undo --steps 2')).toBe('/undo: rewound 2 turns, 3 files restored (0 remaining)')
    expect(files('a.txt', 'b.txt', 'c.txt')).toEqual({ 'a.txt': null, 'b.txt': null, 'c.txt': null })
    expect(s.messages()).toEqual([])
    expect(await send(s, '/undo')).toBe('/undo: nothing to undo (0 remaining)')

    expect(await send(s, '/redo 3')).toBe('/redo: replayed 3 turns, 3 files restored (0 remaining)')
    expect(files('a.txt', 'b.txt', 'c.txt')).toEqual({ 'a.txt': 'ALPHA\n', 'b.txt': 'bravo\n', 'c.txt': 'charlie\n' })
    expect(userTexts(s)).toHaveLength(3)

    const events = await s.events()
    expect(ofType(events, 'undo').map((e) => e.data.output)).toEqual([
      '/undo: rewound 1 turn, 0 files restored (2 remaining)',
      '/undo: rewound 1 turn, 2 files restored (1 remaining)',
      '/undo: rewound 2 turns, 3 files restored (0 remaining)',
      '/undo: nothing to undo (0 remaining)',
    ])
    const second = ofType(events, 'undo')[1]!.data
    expect(second.files?.sort()).toEqual([join(env.cwd, 'a.txt'), join(env.cwd, 'c.txt')])
    expect(ofType(events, 'redo').map((e) => [e.data.turns, e.data.files_restored, e.data.remaining])).toEqual([
      [1, 2, 1],
      [3, 3, 0],
    ])
  })

  it("replies with the document's line for a turn that changed two files", async () => {
    const s = await manager().create()
    await send(s, `${write('x', '1')}\n${write('y', '2')}`)
    expect(await send(s, '/undo')).toBe('/undo: rewound 1 turn, 2 files restored (0 remaining)')
    expect(files('x', 'y')).toEqual({ x: null, y: null })
  })

  it('a new turn after an undo drops the redo branch and its orphaned blobs', async () => {
    const s = await manager().create()
    await send(s, write('f', 'version one'))
    await send(s, write('f', 'version two, only in the redo branch'))
    await send(s, '/undo')
    expect(file('f')).toBe('version one')
    const blobs = join(snapDir(s.id), 'blobs')
    expect(readdirSync(blobs)).toHaveLength(2)
    await send(s, write('g', 'new branch'))
    expect(await send(s, '/redo')).toBe('/redo: nothing to redo (0 remaining)')
    expect(readdirSync(join(snapDir(s.id), 'snaps'))).toHaveLength(2)
    const kept = readdirSync(blobs)
      .map((b) => readFileSync(join(blobs, b), 'utf8'))
      .sort()
    expect(kept).toEqual(['new branch', 'version one'])
    expect(await send(s, '/undo 2')).toBe('/undo: rewound 2 turns, 2 files restored (0 remaining)')
    expect(files('f', 'g')).toEqual({ f: null, g: null })
  })

  it('survives a restart: the position is on disk and matches the messages', async () => {
    const m1 = manager()
    const s1 = await m1.create()
    await send(s1, write('f', 'one'))
    await send(s1, `${edit('f', 'one', 'two')}\n${write('g', 'gee')}`)
    expect(await send(s1, '/undo')).toBe('/undo: rewound 1 turn, 2 files restored (1 remaining)')
    await m1.shutdown()

    const m2 = manager()
    const s2 = await m2.get(s1.id)
    expect(await s2.rewindCounts()).toEqual({ undoable: 1, redoable: 1 })
    expect(await send(s2, '/redo')).toBe('/redo: replayed 1 turn, 2 files restored (0 remaining)')
    expect(files('f', 'g')).toEqual({ f: 'two', g: 'gee' })
    expect(userTexts(s2)).toHaveLength(2)
    expect(await send(s2, '/undo --steps 5')).toBe('/undo: rewound 2 turns, 2 files restored (0 remaining)')
    expect(files('f', 'g')).toEqual({ f: null, g: null })
  })

  it.each([1, 2])(
    'steers a cancelled turn never took (%i, closed like prompts that never ran) are undo steps: undo after a restart rewinds the last real turn',
    async (steers) => {
      const m1 = manager()
      const s1 = await m1.create()
      await send(s1, write('f', 'one'))
      const slow = s1.prompt('!sleep 600000')
      await slow.accepted
      for (let i = 0; i < steers; i++) expect(await s1.steer(`steer ${i}`)).toBe(true)
      s1.cancel()
      await within(slow.done, 10_000, 'the cancelled turn')
      await send(s1, edit('f', 'one', 'two'))
      expect(await s1.rewindCounts()).toEqual({ undoable: 3 + steers, redoable: 0 })
      await m1.shutdown()
      const s2 = await manager().get(s1.id)
      expect(await s2.rewindCounts()).toEqual({ undoable: 3 + steers, redoable: 0 })
      expect(await send(s2, '/undo')).toMatch(/rewound 1 turn, 1 file restored/)
      expect(file('f')).toBe('one')
    },
  )

  it('a queued prompt whose user_message the store refused is one undo step, once closed: undo of every turn reaches the first', async () => {
    const store = new (class extends MemoryEventStore {
      refuse = false
      override async append(e: AnyEvent): Promise<void> {
        if (this.refuse && e.type === 'user_message')
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
        return super.append(e)
      }
    })()
    const s = await manager(undefined, store).create()
    await send(s, write('f', 'one'))
    const slow = s.prompt('!sleep 600000')
    await slow.accepted
    const queued = s.prompt('!say refused')
    await queued.accepted
    store.refuse = true
    s.cancel()
    await within(slow.done, 10_000, 'the cancelled turn')
    expect(await within(queued.done, 10_000, 'the refused turn')).toMatchObject({ stop_reason: 'error' })
    store.refuse = false
    await send(s, edit('f', 'one', 'two'))
    // write, the cancelled sleep, the refused prompt (closed with an error), the edit.
    expect(userTexts(s)).toHaveLength(4)
    expect(await s.rewindCounts()).toEqual({ undoable: 4, redoable: 0 })
    expect(await send(s, '/undo 4')).toMatch(/rewound 4 turns/)
    expect(file('f')).toBe(null)
  })

  it('after a crash between a turn and its snapshot, the restart commits that turn so undo stays aligned', async () => {
    const real = snapshotHistory({ home: env.home, env: {} })
    let crash = false
    // The process "dies" after the second turn's files changed, before its snapshot was taken.
    const m1 = env.manager({
      tools: trackedTools(),
      history: (meta) => {
        const h = real(meta)
        return {
          ...h,
          willChange: (a) => h.willChange(a),
          counts: () => h.counts(),
          undo: (n) => h.undo(n),
          redo: (n) => h.redo(n),
          clear: () => h.clear(),
          align: (p) => h.align!(p),
          commitTurn: (c) => (crash ? Promise.resolve() : h.commitTurn(c)),
        }
      },
    })
    const s1 = await m1.create()
    await send(s1, write('f', 'one'))
    crash = true
    await send(s1, `${write('f', 'two')}\n${write('g', 'gee')}`)
    await m1.shutdown()

    const s2 = await manager().get(s1.id)
    expect(await send(s2, '/undo')).toBe('/undo: rewound 1 turn, 2 files restored (1 remaining)')
    expect(files('f', 'g')).toEqual({ f: 'one', g: null })
    expect(await send(s2, '/undo')).toBe('/undo: rewound 1 turn, 1 file restored (0 remaining)')
    expect(file('f')).toBeNull()
  })

  it('a turn is reported once its terminal event is on disk, before its snapshot; the next turn writes nothing until that snapshot is on disk', async () => {
    const real = snapshotHistory({ home: env.home, env: {} })
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    let commits = 0
    const m = env.manager({
      store: new MemoryEventStore(),
      tools: trackedTools(),
      history: (meta) => {
        const h = real(meta)
        return {
          ...h,
          willChange: (a) => h.willChange(a),
          counts: () => h.counts(),
          undo: (n) => h.undo(n),
          redo: (n) => h.redo(n),
          clear: () => h.clear(),
          align: (p) => h.align!(p),
          commitTurn: async (c) => {
            commits++
            await gate
            return h.commitTurn(c)
          },
        }
      },
    })
    const s = await m.create()
    const first = s.prompt(write('f', 'one'))
    const outcome = await within(first.ended!, 15_000, 'the first turn reported')
    // Reported before its snapshot began: that begins in the macrotask after the answer's.
    expect(commits).toBe(0)
    expect(outcome.success).toBe(true)
    const events = await s.events()
    expect(events.at(-1)?.type).toBe('agent_result')
    await new Promise((r) => setImmediate(r))
    expect(commits).toBe(1)
    let saved = false
    void first.done.then(() => (saved = true))
    // Sent right after the answer: accepted, but its turn waits for the first one's snapshot.
    const second = s.prompt(write('f', 'two'))
    // The memory store writes a group within a macrotask of its drain: a turn that did not wait
    // would have its user_message in the log by the third.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r))
    expect(s.lastSeq).toBe(events.length)
    expect(saved).toBe(false)
    open()
    await within(second.done, 15_000, 'the second turn')
    expect(saved).toBe(true)
    expect(commits).toBe(2)
    expect(await s.rewindCounts()).toEqual({ undoable: 2, redoable: 0 })
    await m.shutdown()
  })

  it('Bash changes are not tracked: undoing a Bash turn restores nothing, undoing the Edit before it brings its pre-image back', async () => {
    const s = await manager().create()
    await send(s, write('f', 'v1\n'))
    await send(s, edit('f', 'v1', 'v2'))
    expect(await send(s, bash('rm f'))).toMatch(/^Bash ok/)
    expect(file('f')).toBeNull()
    expect(await send(s, '/undo')).toBe('/undo: rewound 1 turn, 0 files restored (2 remaining)')
    expect(file('f')).toBeNull()
    expect(await send(s, '/undo')).toBe('/undo: rewound 1 turn, 1 file restored (1 remaining)')
    expect(file('f')).toBe('v1\n')
    // Redo puts back what the undo displaced: the file Bash had deleted is deleted again.
    expect(await send(s, '/redo')).toBe('/redo: replayed 1 turn, 1 file restored (1 remaining)')
    expect(file('f')).toBeNull()
  })

  it('records files over the size limit as null and leaves them alone', async () => {
    const s = await manager(64).create()
    await send(s, write('small', 'small'))
    await send(s, `${write('big.log', 'x'.repeat(100))}\n${edit('small', 'small', 'SMALL')}`)
    const snaps = join(snapDir(s.id), 'snaps')
    const last = readdirSync(snaps).sort().at(-1)!
    expect(JSON.parse(readFileSync(join(snaps, last, 'manifest.json'), 'utf8'))[join(env.cwd, 'big.log')]).toBeNull()
    expect(await send(s, '/undo')).toBe('/undo: rewound 1 turn, 1 file restored (1 remaining)')
    expect(files('small', 'big.log')).toEqual({ small: 'small', 'big.log': 'x'.repeat(100) })
  })

  it('never touches a file the agent did not write; an outside edit of an agent file comes back with redo', async () => {
    const s = await manager().create()
    writeFileSync(join(env.cwd, 'notes.txt'), 'mine')
    await send(s, write('f', 'agent'))
    writeFileSync(join(env.cwd, 'notes.txt'), 'mine, edited')
    writeFileSync(join(env.cwd, 'f'), 'agent + user')
    expect(await send(s, '/undo')).toBe('/undo: rewound 1 turn, 1 file restored (0 remaining)')
    expect(files('f', 'notes.txt')).toEqual({ f: null, 'notes.txt': 'mine, edited' })
    await send(s, '/redo')
    expect(files('f', 'notes.txt')).toEqual({ f: 'agent + user', 'notes.txt': 'mine, edited' })
  })

  it('undo and redo as operations (the transports’ endpoints), and a bad count as a usage error', async () => {
    const s = await manager().create()
    await send(s, write('f', '1'))
    await send(s, write('f', '2'))
    expect(await s.undo(2)).toEqual({
      turns: 2,
      files_restored: 1,
      remaining: 0,
      files: [join(env.cwd, 'f')],
      output: '/undo: rewound 2 turns, 1 file restored (0 remaining)',
    })
    expect(await s.redo(1)).toMatchObject({ turns: 1, files_restored: 1, remaining: 1 })
    expect(file('f')).toBe('1')
    expect(await send(s, '/undo two')).toMatch(/^usage: \/undo \[N \| --steps N\]/)
    expect(file('f')).toBe('1')
  })

  it('deleting the session (teardown) wipes its snapshot store', async () => {
    const m = manager()
    const s = await m.create()
    await send(s, write('f', '1'))
    expect(existsSync(snapDir(s.id))).toBe(true)
    await m.delete(s.id, { purge: true })
    expect(existsSync(snapDir(s.id))).toBe(false)
    expect(file('f')).toBe('1')
  })

  it('purging a persisted session that is not in memory (after a restart) wipes its snapshot store too', async () => {
    const first = manager()
    const s = await first.create()
    await send(s, write('f', '1'))
    await first.shutdown()
    expect(existsSync(snapDir(s.id))).toBe(true)
    const second = manager()
    expect(second.peek(s.id)).toBeUndefined()
    await second.delete(s.id, { purge: true })
    expect(existsSync(snapDir(s.id))).toBe(false)
    expect(await second.get(s.id).catch(() => undefined)).toBeUndefined()
  })
})
