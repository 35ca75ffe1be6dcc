/**
 * The lock file (lock-file.ts) taken over from a stale holder while a rival races for it: the
 * rival runs inside the judgement of the stale record (a LockKind whose `live()` acts as the
 * rival), so the interleaving is the one each test names, every run (any number of racing
 * processes: session-owner.test.ts). Both runners (sync, for the pidfile; `fs.promises`, for
 * the session markers) run the same steps.
 */
import fs, { existsSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { takeLock, takeLockAsync, type LockKind, type LockTaken } from './lock-file.ts'

const temp = tempDirs()
afterEach(() => temp.cleanup())

interface Rec {
  who: string
  alive: boolean
}

/** A kind whose judgement of the stale record runs `rival` first (once). */
function kindWithRival(rival: () => void): LockKind<Rec> {
  let raced = false
  return {
    parse(text) {
      try {
        const r = JSON.parse(text) as Rec
        return typeof r.who === 'string' ? r : undefined
      } catch {
        return undefined
      }
    },
    live(r) {
      if (!r.alive && !raced) {
        raced = true
        rival()
      }
      return r.alive
    },
    same: (a, b) => a.who === b.who,
  }
}

const runners: [string, (path: string, r: Rec, k: LockKind<Rec>) => Promise<LockTaken<Rec>>][] = [
  ['sync', async (path, r, k) => takeLock(path, r, k)],
  ['fs.promises', (path, r, k) => takeLockAsync(path, r, k)],
]

describe.each(runners)('taking a stale lock file (%s)', (_, take) => {
  it('a rival that takes it first keeps it: one holder', async () => {
    const dir = temp.make('lock-')
    const path = join(dir, 'x.lock')
    writeFileSync(path, `${JSON.stringify({ who: 'dead', alive: false })}\n`)
    const plain = kindWithRival(() => {})
    const kind = kindWithRival(() => {
      // The rival judges the same stale record, takes the lock over, and holds it.
      expect(takeLock(path, { who: 'rival', alive: true }, plain)).toEqual({ kind: 'taken' })
    })
    const r = await take(path, { who: 'me', alive: true }, kind)
    expect(r).toEqual({ kind: 'held', record: { who: 'rival', alive: true } })
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ who: 'rival', alive: true })
    expect(readdirSync(dir)).toEqual(['x.lock'])
  })

  it('a rival lock that replaced the stale one is not moved; judged again (garbage: taken over)', async () => {
    const dir = temp.make('lock-')
    const path = join(dir, 'x.lock')
    writeFileSync(path, `${JSON.stringify({ who: 'dead', alive: false })}\n`)
    // The rival's lock, as this taker finds it when it moves the stale one aside: not a record.
    const kind = kindWithRival(() => writeFileSync(path, ''))
    const r = await take(path, { who: 'me', alive: true }, kind)
    // Under the guard the lock is no longer the text judged stale: left, judged again (garbage).
    expect(r).toEqual({ kind: 'taken' })
    expect(readdirSync(dir)).toEqual(['x.lock'])
  })

  it('a new lock is never seen empty: it is linked into place whole', async () => {
    const dir = temp.make('lock-')
    const path = join(dir, 'x.lock')
    // Whenever the taker writes anything, the lock path is either absent or a whole record (a
    // rival reading it then would otherwise find it empty, judge it garbage and move it aside).
    const seen: string[] = []
    const look = (): void => {
      if (existsSync(path)) seen.push(readFileSync(path, 'utf8'))
    }
    const { writeSync, writeFileSync: wfs } = fs
    fs.writeSync = ((...a: Parameters<typeof writeSync>) => (look(), writeSync(...a))) as typeof writeSync
    fs.writeFileSync = ((...a: Parameters<typeof wfs>) => (look(), wfs(...a))) as typeof wfs
    syncBuiltinESMExports()
    try {
      expect(
        await take(
          path,
          { who: 'me', alive: true },
          kindWithRival(() => {}),
        ),
      ).toEqual({ kind: 'taken' })
    } finally {
      fs.writeSync = writeSync
      fs.writeFileSync = wfs
      syncBuiltinESMExports()
    }
    expect(seen.filter((t) => t.trim() === '')).toEqual([])
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ who: 'me', alive: true })
    expect(readdirSync(dir)).toEqual(['x.lock'])
  })

  it('a lock that is no small regular file is garbage, taken over without being followed, waited on or loaded whole', async () => {
    const dir = temp.make('lock-')
    const live = `${JSON.stringify({ who: 'live', alive: true })}\n`
    const target = join(dir, 'target')
    writeFileSync(target, live)
    const kind = kindWithRival(() => {})
    // A symlink to a live record: the link is what is judged (and replaced), not what it names.
    const link = join(dir, 'link.lock')
    symlinkSync(target, link)
    expect(await take(link, { who: 'me', alive: true }, kind)).toEqual({ kind: 'taken' })
    expect(JSON.parse(readFileSync(link, 'utf8'))).toEqual({ who: 'me', alive: true })
    expect(readFileSync(target, 'utf8')).toBe(live)
    // A live record padded past any lock's size (a huge file): not read whole, garbage.
    const huge = join(dir, 'huge.lock')
    writeFileSync(huge, live + ' '.repeat(1 << 20))
    expect(await take(huge, { who: 'me', alive: true }, kind)).toEqual({ kind: 'taken' })
    expect(JSON.parse(readFileSync(huge, 'utf8'))).toEqual({ who: 'me', alive: true })
    // A FIFO: opening it to read would wait for a writer (forever, on a thread of the pool).
    const fifo = join(dir, 'fifo.lock')
    execFileSync('mkfifo', [fifo])
    expect(await take(fifo, { who: 'me', alive: true }, kind)).toEqual({ kind: 'taken' })
    expect(JSON.parse(readFileSync(fifo, 'utf8'))).toEqual({ who: 'me', alive: true })
    expect(readdirSync(dir).sort()).toEqual(['fifo.lock', 'huge.lock', 'link.lock', 'target'])
  })

  it('a stale lock whose holder beats between the judgement and the takeover is left to it', async () => {
    const dir = temp.make('lock-')
    const path = join(dir, 'x.lock')
    const held = { who: 'holder', alive: true }
    writeFileSync(path, `${JSON.stringify(held)}\n`)
    const old = (Date.now() - 3_600_000) / 1000
    utimesSync(path, old, old)
    // Judged by its time (a heartbeat): stale when not set within the last minute. The holder
    // comes back and beats while this taker is judging it stale.
    let beat = false
    const kind: LockKind<Rec> = {
      ...kindWithRival(() => {}),
      live(_r, mtimeMs) {
        const stale = Date.now() - mtimeMs > 60_000
        if (stale && !beat) {
          beat = true
          const now = Date.now() / 1000
          utimesSync(path, now, now)
        }
        return !stale
      },
    }
    expect(await take(path, { who: 'me', alive: true }, kind)).toEqual({ kind: 'held', record: held })
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(held)
    expect(readdirSync(dir)).toEqual(['x.lock'])
  })
})
