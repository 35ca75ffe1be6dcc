/**
 * A lock that is a file (docs/decisions/0060-pidfile-lock.md): Node has no `flock`, so the file
 * itself is the lock. The record is written whole to a temporary file first and hard-linked into
 * place (`link` fails with EEXIST when the lock exists), so exactly one process wins and a lock
 * is never seen empty or half written. Its record says who holds it; a lock whose holder is gone
 * (crashed before removing it) is stale: it is taken over under a guard file that one taker
 * wins (`lockSteps`), so any number of takers racing for a stale lock end with one holder.
 *
 * The logic is written once, as steps (`lockSteps`), run with synchronous fs calls (the server
 * pidfile, pidfile.ts: at start-up and in an exit handler) or with `fs.promises` (each session's
 * owner marker, session-owner.ts, docs/decisions/0431-one-writer-per-session.md: on the session
 * path, which never blocks the event loop).
 */
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { link, open, rename, unlink, writeFile } from 'node:fs/promises'
import { scratchSuffix } from '../platform/random.ts'

/** What a kind of lock file holds, and how its holder is judged. */
export interface LockKind<R> {
  /** The record in a lock's text; undefined when it is not one (garbage: taken over as stale). */
  parse(text: string): R | undefined
  /** True while the holder of `r` may still use the lock (then it is left alone); `mtimeMs`: the lock file's. */
  live(r: R, mtimeMs: number): boolean
  /** The same record (a lock is dropped only by its holder). */
  same(a: R, b: R): boolean
}

/** What {@link takeLock} found: the lock is now this record's, or a live holder has it. */
export type LockTaken<R> = { kind: 'taken' } | { kind: 'held'; record: R }

/** A lock file as read: its text and modification time; undefined when there is none. */
interface LockText {
  text: string
  mtimeMs: number
}

/** The file operations the steps ask for (each answered by a sync or an async runner). */
type Op =
  | { op: 'create'; path: string; text: string }
  | { op: 'read'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'link'; from: string; to: string }
  | { op: 'unlink'; path: string }
  | { op: 'wait'; ms: number }

type Answer = boolean | LockText | undefined
type Steps<T> = Generator<Op, T, Answer>

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code
}

/**
 * A lock is a small regular file: one that is not (a symlink, a FIFO, a device, anything larger
 * than this) is read as garbage, so it is taken over like one, and reading it never follows a
 * link, blocks on a FIFO or loads a huge file into memory.
 */
const LOCK_MAX_BYTES = 4096
/** Opened without following a symlink (ELOOP) and without waiting for a FIFO's writer. */
const LOCK_OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
/** What a path that is there but is no lock reads as (its text parses as no record). */
const NOT_A_LOCK: LockText = { text: '', mtimeMs: 0 }

/** The lock's text from its first bytes (`size`: the file's), or garbage when it is too large. */
function lockText(buf: Buffer, read: number, size: number, mtimeMs: number): LockText {
  return read > LOCK_MAX_BYTES || size > LOCK_MAX_BYTES
    ? { text: '', mtimeMs }
    : { text: buf.toString('utf8', 0, read), mtimeMs }
}

/** The temporary file a record is written to before it is linked into place. */
function tempPath(path: string, what: string): string {
  return `${path}.${what}-${scratchSuffix()}`
}

/** The text of a lock holding `record`. */
const recordText = <R>(record: R): string => `${JSON.stringify(record)}\n`

/**
 * A free lock's file for `record`, for a writer of its own (the event-file thread making a new
 * session): its text written whole to `tmp` (mode 0600, created exclusively), linked to `path`
 * (EEXIST: another holder has it), then `tmp` removed — the first step of {@link takeLock}.
 */
export function freshLock<R>(path: string, record: R): { path: string; tmp: string; text: string } {
  return { path, tmp: tempPath(path, 'new'), text: recordText(record) }
}

const sync = {
  create(path: string, text: string): boolean {
    const tmp = tempPath(path, 'new')
    try {
      writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' })
    } catch (err) {
      // Not left behind half written (a full disk); ENOENT (no directory) throws as it is.
      attempt(() => unlinkSync(tmp))
      throw err
    }
    try {
      linkSync(tmp, path)
      return true
    } catch (err) {
      if (errCode(err) === 'EEXIST') return false
      throw err
    } finally {
      unlinkSync(tmp)
    }
  },
  read(path: string): LockText | undefined {
    let fd: number
    try {
      fd = openSync(path, LOCK_OPEN_FLAGS)
    } catch (err) {
      return errCode(err) === 'ELOOP' ? NOT_A_LOCK : undefined
    }
    try {
      const st = fstatSync(fd)
      if (!st.isFile()) return { text: '', mtimeMs: st.mtimeMs }
      const buf = Buffer.allocUnsafe(LOCK_MAX_BYTES + 1)
      return lockText(buf, readSync(fd, buf, 0, buf.length, 0), st.size, st.mtimeMs)
    } catch {
      return undefined
    } finally {
      closeSync(fd)
    }
  },
  run(op: Op): Answer {
    switch (op.op) {
      case 'create':
        return sync.create(op.path, op.text)
      case 'read':
        return sync.read(op.path)
      case 'rename':
        return attempt(() => renameSync(op.from, op.to))
      case 'link':
        return attempt(() => linkSync(op.from, op.to))
      case 'unlink':
        return attempt(() => unlinkSync(op.path))
      case 'wait':
        // The pidfile only (start-up): a takeover by another server is a few file operations.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, op.ms)
        return true
    }
  },
}

function attempt(fn: () => void): boolean {
  try {
    fn()
    return true
  } catch {
    return false
  }
}

async function attemptAsync(p: Promise<void>): Promise<boolean> {
  try {
    await p
    return true
  } catch {
    return false
  }
}

const promised = {
  async create(path: string, text: string): Promise<boolean> {
    const tmp = tempPath(path, 'new')
    try {
      await writeFile(tmp, text, { mode: 0o600, flag: 'wx' })
    } catch (err) {
      await attemptAsync(unlink(tmp))
      throw err
    }
    try {
      await link(tmp, path)
      return true
    } catch (err) {
      if (errCode(err) === 'EEXIST') return false
      throw err
    } finally {
      await unlink(tmp)
    }
  },
  async read(path: string): Promise<LockText | undefined> {
    let fh: Awaited<ReturnType<typeof open>>
    try {
      fh = await open(path, LOCK_OPEN_FLAGS)
    } catch (err) {
      return errCode(err) === 'ELOOP' ? NOT_A_LOCK : undefined
    }
    try {
      const st = await fh.stat()
      if (!st.isFile()) return { text: '', mtimeMs: st.mtimeMs }
      const buf = Buffer.allocUnsafe(LOCK_MAX_BYTES + 1)
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0)
      return lockText(buf, bytesRead, st.size, st.mtimeMs)
    } catch {
      return undefined
    } finally {
      await fh.close()
    }
  },
  run(op: Op): Promise<Answer> {
    switch (op.op) {
      case 'create':
        return promised.create(op.path, op.text)
      case 'read':
        return promised.read(op.path)
      case 'rename':
        return attemptAsync(rename(op.from, op.to))
      case 'link':
        return attemptAsync(link(op.from, op.to))
      case 'unlink':
        return attemptAsync(unlink(op.path))
      case 'wait':
        return new Promise((resolve) => setTimeout(() => resolve(true), op.ms))
    }
  },
}

function runSync<T>(steps: Steps<T>): T {
  let next = steps.next(undefined)
  while (!next.done) next = steps.next(sync.run(next.value))
  return next.value
}

async function runAsync<T>(steps: Steps<T>): Promise<T> {
  let next = steps.next(undefined)
  while (!next.done) next = steps.next(await promised.run(next.value))
  return next.value
}

/** A takeover guard older than this was left by a taker that died mid-takeover: removed. */
const GUARD_STALE_MS = 10_000
/** How long a taker waits for another's takeover to end before it looks again. */
const GUARD_WAIT_MS = 10

/**
 * The steps of taking the lock at `path` for `record` (written as one JSON line), taking over a
 * stale one. A takeover runs under a guard, `<path>.takeover` (created like the lock: one taker
 * wins it): its holder checks the lock is still the text judged stale, moves it aside, links its
 * own and drops the guard; the others wait and look again. So any number of takers racing for a
 * stale lock end with one holder, and a lock that is not the stale one is never moved. Throws
 * what creating the file throws (ENOENT: its directory is missing), or when no round found a
 * free lock or a holder.
 */
function* lockSteps<R>(path: string, record: R, kind: LockKind<R>): Steps<LockTaken<R>> {
  const text = recordText(record)
  const guard = `${path}.takeover`
  for (let round = 0; round < 200; round++) {
    if ((yield { op: 'create', path, text }) === true) return { kind: 'taken' }
    const found = (yield { op: 'read', path }) as LockText | undefined
    // Gone meanwhile (its holder let it go): try again.
    if (found === undefined) continue
    const held = kind.parse(found.text)
    if (held !== undefined && kind.live(held, found.mtimeMs)) return { kind: 'held', record: held }
    // Stale (or garbage): take it over under the guard.
    if ((yield { op: 'create', path: guard, text }) !== true) {
      const other = (yield { op: 'read', path: guard }) as LockText | undefined
      if (other && Date.now() - other.mtimeMs > GUARD_STALE_MS) yield { op: 'unlink', path: guard }
      else yield { op: 'wait', ms: GUARD_WAIT_MS }
      continue
    }
    const taken = yield* takeOver(path, found, text)
    yield { op: 'unlink', path: guard }
    if (taken) return { kind: 'taken' }
  }
  const last = (yield { op: 'read', path }) as LockText | undefined
  const held = last && kind.parse(last.text)
  if (held !== undefined) return { kind: 'held', record: held }
  throw new Error(`cannot create ${path}`)
}

/** The same lock as judged: its text, and its time (a holder's heartbeat sets it). */
const unchanged = (a: LockText | undefined, b: LockText): boolean => a?.text === b.text && a.mtimeMs === b.mtimeMs

/**
 * Under the guard: replace the lock at `path`, if it is still `stale` (the same text, not
 * refreshed since), with `text`. False when it is not (look again) or another taker created the
 * lock in the moment it was away.
 */
function* takeOver(path: string, stale: LockText, text: string): Steps<boolean> {
  const now = (yield { op: 'read', path }) as LockText | undefined
  if (!unchanged(now, stale)) return false
  const aside = tempPath(path, 'stale')
  if ((yield { op: 'rename', from: path, to: aside }) !== true) return false
  const moved = (yield { op: 'read', path: aside }) as LockText | undefined
  // Not the stale lock after all (removed by hand and taken meanwhile, or its holder's beat came
  // in between): it goes back.
  if (!unchanged(moved, stale)) {
    yield { op: 'link', from: aside, to: path }
    yield { op: 'unlink', path: aside }
    return false
  }
  yield { op: 'unlink', path: aside }
  return (yield { op: 'create', path, text }) === true
}

/** A lock's record and the time its file was last modified (its holder's last heartbeat). */
export interface LockFound<R> {
  record: R
  mtimeMs: number
}

function* readSteps<R>(path: string, kind: Pick<LockKind<R>, 'parse'>): Steps<LockFound<R> | undefined> {
  const found = (yield { op: 'read', path }) as LockText | undefined
  const record = found && kind.parse(found.text)
  return record === undefined ? undefined : { record, mtimeMs: found!.mtimeMs }
}

function* dropSteps<R>(path: string, record: R, kind: Pick<LockKind<R>, 'parse' | 'same'>): Steps<void> {
  const held = yield* readSteps(path, kind)
  if (held !== undefined && !kind.same(held.record, record)) return
  yield { op: 'unlink', path }
}

/** Take the lock at `path` for `record` (synchronously): `held` when a live holder has it. */
export function takeLock<R>(path: string, record: R, kind: LockKind<R>): LockTaken<R> {
  return runSync(lockSteps(path, record, kind))
}

/** {@link takeLock} with `fs.promises`. */
export function takeLockAsync<R>(path: string, record: R, kind: LockKind<R>): Promise<LockTaken<R>> {
  return runAsync(lockSteps(path, record, kind))
}

/** The record in the lock at `path`; undefined when there is none or it is not one. */
export function readLock<R>(path: string, kind: Pick<LockKind<R>, 'parse'>): R | undefined {
  return runSync(readSteps(path, kind))?.record
}

/** The lock at `path` with its modification time, read with `fs.promises`. */
export function readLockAsync<R>(path: string, kind: Pick<LockKind<R>, 'parse'>): Promise<LockFound<R> | undefined> {
  return runAsync(readSteps(path, kind))
}

/** Remove the lock at `path` if it still holds `record` (never another holder's). */
export function dropLock<R>(path: string, record: R, kind: Pick<LockKind<R>, 'parse' | 'same'>): void {
  runSync(dropSteps(path, record, kind))
}

/** {@link dropLock} with `fs.promises`. */
export function dropLockAsync<R>(path: string, record: R, kind: Pick<LockKind<R>, 'parse' | 'same'>): Promise<void> {
  return runAsync(dropSteps(path, record, kind))
}
