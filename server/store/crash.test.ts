/**
 * Crash safety of the file event store (docs/core.md): a child process appends large events in a
 * tight loop and is SIGKILLed mid-stream. A fresh store must then load a contiguous prefix
 * 1..k that holds every event the child reported appended, byte for byte, with at most the
 * torn record after it quarantined, and appends must continue at k + 1.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { crashEvent } from './fixtures/crash-payload.ts'
import { eventFileName, newSessionId } from './paths.ts'
import { openedStores } from './fixtures/stores.ts'

const fileStores = openedStores()
afterEach(() => fileStores.closeAll())

const repo = fileURLToPath(new URL('../..', import.meta.url))
const writer = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url))
const ROUND_TIMEOUT_MS = 20_000
const children = new Set<ChildProcess>()
const dirs: string[] = []

const alive = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null
afterEach(() => {
  for (const c of children) if (alive(c)) c.kill('SIGKILL')
})
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

interface Run {
  reported: number[]
  signal: NodeJS.Signals | null
}

/** Start the writer, SIGKILL it once it has reported `killAfter` appends, and wait for its exit. */
function runWriter(root: string, sessionId: string, killAfter: number, group = 1): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', writer, root, sessionId, String(group)], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  })
  children.add(child)
  const reported: number[] = []
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ROUND_TIMEOUT_MS)
    child.on('message', (m: { seq?: number }) => {
      if (typeof m.seq !== 'number') return
      reported.push(m.seq)
      if (reported.length >= killAfter && alive(child)) child.kill('SIGKILL')
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (reported.length < killAfter)
        reject(
          new Error(`writer ended early (code ${code}, signal ${signal}) after ${reported.length} appends: ${stderr}`),
        )
      else resolve({ reported, signal })
    })
  })
}

/**
 * The rounds: single appends (`group` 1), and group commits of `group` events (`appendMany`),
 * where the kill may land with several files of a group half written: every reported event
 * must still be there, and only files of the group being written may be quarantined.
 */
describe.each([
  { group: 1, rounds: [0, 1, 2, 3, 4] },
  { group: 7, rounds: [0, 1, 2] },
])('FileEventStore survives SIGKILL mid-append (group of $group)', ({ group, rounds }) => {
  it.each(rounds)('round %i', async (round) => {
    const tmp = mkdtempSync(join(tmpdir(), 'chimera-crash-'))
    dirs.push(tmp)
    const root = join(tmp, 'eventlog')
    const id = newSessionId('otter')
    const { reported, signal } = await runWriter(root, id, 200 + round * 57, group)
    expect(signal).toBe('SIGKILL')
    expect(reported).toEqual(Array.from({ length: reported.length }, (_, i) => i + 1))

    const store = fileStores.open({ root })
    const loaded = await store.load(id)
    expect(loaded).toBeDefined()
    const seqs = loaded!.events.map((e) => e.seq)
    const k = seqs.length
    expect(seqs).toEqual(Array.from({ length: k }, (_, i) => i + 1))
    expect(k).toBeGreaterThanOrEqual(reported.at(-1)!)
    for (const e of loaded!.events) {
      const expected = crashEvent(id, e.seq)
      const bytes = readFileSync(join(root, id, eventFileName(e.seq, e.type)), 'utf8')
      if (bytes !== `${JSON.stringify(expected)}\n`)
        expect.fail(`event ${e.seq} differs from what the writer generated`)
      expect(e).toEqual(expected)
    }

    // At most the records being written when the kill landed (one, or the files of one group
    // after the first missing one) are dropped, and they are kept aside.
    const qdir = join(root, id, 'quarantine')
    const dropped = existsSync(qdir) ? readdirSync(qdir).flatMap((d) => readdirSync(join(qdir, d))) : []
    expect(loaded!.repaired).toBe(dropped.length > 0)
    const inFlight = Array.from({ length: group }, (_, i) => eventFileName(k + 1 + i, crashEvent(id, k + 1 + i).type))
    expect(dropped.filter((n) => !inFlight.includes(n))).toEqual([])
    expect(dropped.length).toBeLessThanOrEqual(group)

    await store.append(crashEvent(id, k + 1))
    expect((await fileStores.open({ root }).read(id, k)).map((e) => e.seq)).toEqual([k + 1])
  })
})

describe('the crash writers', () => {
  it('left no writer running', () => {
    expect(children.size).toBe(8)
    expect([...children].filter(alive)).toEqual([])
  })
})
