/**
 * A lock that is a file (docs/decisions/0060-pidfile-lock.md): Node has no `flock`, so the file
 * itself is the lock, created with `O_CREAT | O_EXCL` (`wx`), which exactly one process wins.
 * Its record says who holds it; a lock whose holder is gone (crashed before removing it) is
 * stale: the next taker moves it aside atomically (rename), checks that what it moved is the
 * stale record it read (else a racing taker got there first and its record is put back), and
 * creates its own with `O_EXCL` again, so two processes racing for a stale lock still end with
 * one holder. The server pidfile (pidfile.ts) and each session's owner marker
 * (session-owner.ts, docs/decisions/0431-one-writer-per-session.md) are such locks.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs'

/** What a kind of lock file holds, and how its holder is judged. */
export interface LockKind<R> {
  /** The record in a lock's text; undefined when it is not one (garbage, or being written). */
  parse(text: string): R | undefined
  /** True while the holder of `r` may still use the lock (then it is left alone). */
  live(r: R): boolean
  /** The same record (the one judged stale is the one that was moved aside). */
  same(a: R, b: R): boolean
}

/** What {@link takeLock} found: the lock is now this record's, or a live holder has it. */
export type LockTaken<R> = { kind: 'taken' } | { kind: 'held'; record: R }

/** The record in the lock at `path`; undefined when there is none or it is not one. */
export function readLock<R>(path: string, kind: Pick<LockKind<R>, 'parse'>): R | undefined {
  try {
    return kind.parse(readFileSync(path, 'utf8'))
  } catch {
    return undefined
  }
}

/** Create `path` exclusively with `text` (mode 0600); false when it exists. Other errors throw (ENOENT: no directory). */
function createExclusive(path: string, text: string): boolean {
  let fd: number
  try {
    fd = openSync(path, 'wx', 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  try {
    writeSync(fd, text)
  } catch (err) {
    // Not left half-written (a full disk): a later taker would wait on it, then take it as stale.
    closeSync(fd)
    try {
      unlinkSync(path)
    } catch {
      // already gone
    }
    throw err
  }
  closeSync(fd)
  return true
}

/**
 * Take the lock at `path` for `record` (written as one JSON line), taking over a stale one.
 * `held`: a live holder has it. Throws what creating the file throws (ENOENT: its directory is
 * missing), or when five rounds found neither a free lock nor a readable holder.
 */
export function takeLock<R>(path: string, record: R, kind: LockKind<R>): LockTaken<R> {
  const text = `${JSON.stringify(record)}\n`
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createExclusive(path, text)) return { kind: 'taken' }
    const held = readLock(path, kind)
    if (held === undefined) {
      // Being written by a racing taker (created, not yet filled), or garbage: look again.
      if (attempt < 4) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
        continue
      }
    } else if (kind.live(held)) return { kind: 'held', record: held }
    // Stale: move it aside, and make sure what moved is the record judged stale.
    const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
    try {
      renameSync(path, aside)
    } catch {
      continue
    }
    const moved = readLock(aside, kind)
    if (moved && held && !kind.same(moved, held)) {
      // A racing taker replaced the stale record first: put its record back.
      try {
        linkSync(aside, path)
      } catch {
        // someone holds the path again; they own it
      }
    }
    try {
      unlinkSync(aside)
    } catch {
      // already gone
    }
  }
  const held = readLock(path, kind)
  if (held) return { kind: 'held', record: held }
  throw new Error(`cannot create ${path}`)
}

/** Remove the lock at `path` if it still holds `record` (never another holder's). */
export function dropLock<R>(path: string, record: R, kind: Pick<LockKind<R>, 'parse' | 'same'>): void {
  const held = readLock(path, kind)
  if (held && !kind.same(held, record)) return
  try {
    unlinkSync(path)
  } catch {
    // already gone
  }
}
