/**
 * The on-disk primitives of the file event store: one exclusive-create file per event, atomic
 * JSON replacement (write a temp file, then rename), and the log scan that finds where the
 * valid prefix ends — the first record that is torn, out of sequence or invalid — so the store
 * can quarantine the tail instead of half-reading it.
 */
import { randomUUID } from '../platform/random.ts'
import fs from 'node:fs'
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { AnyEvent } from '../events/event-types.ts'
import { eventFileName, parseEventFileName } from './paths.ts'
import { eventFileThread, NotSentError } from './event-file-worker.ts'
import { eventProblem } from './validate.ts'

/** The errno code of a Node error, if any. */
export function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && typeof (err as NodeJS.ErrnoException).code === 'string'
    ? (err as NodeJS.ErrnoException).code
    : undefined
}

/**
 * Create `path` exclusively (`wx`) with `text`; a failed write removes the partial file. With
 * `fsync` the file is synced, and its directory too unless `syncParent` is false (the caller
 * syncs it once for several files).
 */
export async function writeExclusive(path: string, text: string, fsync = false, syncParent = true): Promise<void> {
  await createFile(path, Buffer.from(text, 'utf8'), fsync)
  if (fsync && syncParent) await syncDir(dirname(path))
}

/**
 * `open(wx)`, write all of `bytes`, optionally `fsync`, close — with the callback API, which
 * costs the event loop much less per file than `fs.promises` (no FileHandle object, no promise
 * per step): the event store creates a file per event. On a failure the file is removed.
 */
function createFile(path: string, bytes: Buffer, fsync: boolean, opened?: (err: Error | null) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(path, 'wx', (err, fd) => {
      opened?.(err)
      if (err) return reject(err)
      const fail = (e: Error): void => fs.close(fd, () => fs.unlink(path, () => reject(e)))
      const close = (): void => fs.close(fd, (e) => (e ? fs.unlink(path, () => reject(e)) : resolve()))
      const writeFrom = (at: number): void =>
        fs.write(fd, bytes, at, bytes.length - at, at, (e, n) => {
          if (e) return fail(e)
          if (n === 0) return fail(new Error(`short write to ${path}`))
          if (at + n < bytes.length) return writeFrom(at + n)
          if (fsync) fs.fsync(fd, (e2) => (e2 ? fail(e2) : close()))
          else close()
        })
      writeFrom(0)
    })
  })
}

/** Make a directory's new entries durable (a created or renamed file survives power loss). */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r').catch(() => undefined)
  if (!fh) return
  try {
    await fh.sync()
  } catch {
    // Some file systems refuse fsync on a directory; the file itself is synced.
  } finally {
    await fh.close().catch(() => {})
  }
}

/** Replace `path` with `value` as JSON: a reader sees the old file or the new one, never a mix. */
export async function writeJsonAtomic(path: string, value: unknown, fsync = false): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`
  const text = `${JSON.stringify(value, null, 2)}\n`
  if (!fsync && eventFileThread.ready()) {
    // Created and renamed on the thread: one message instead of four calls (or, when the thread
    // never began it, the calls below).
    const r = await eventFileThread.write([{ path: tmp, text, renameTo: path }]).catch(notSent)
    if (r) {
      if (r.failures[0]) throw r.failures[0]
      return
    }
  }
  await writeExclusive(tmp, text, fsync)
  try {
    await rename(tmp, path)
  } catch (err) {
    await unlink(tmp).catch(() => {})
    throw err
  }
  if (fsync) await syncDir(dirname(path))
}

/** Write one event as `event-NNNNNN-<type>.json`: its JSON and a newline, never overwriting; returns the record. */
export async function writeEventFile(dir: string, event: AnyEvent, fsync = false, syncParent = true): Promise<string> {
  const text = `${JSON.stringify(event)}\n`
  await writeExclusive(join(dir, eventFileName(event.seq, event.type)), text, fsync, syncParent)
  return text
}

/** Event files of one group open (written, synced, not yet closed) at most. */
const GROUP_IN_FLIGHT = 16

/**
 * Write a group of events as {@link writeEventFile} does each (the caller syncs the directory):
 * the files are opened one after another, in order, while those already open are written (and
 * synced) and closed — creates in one directory take its lock in turn, so opening several at once
 * only spins on it (measured slower), but one file's write and close overlap the next one's open.
 * After a failure no further file is opened. Per event: its record, or why it was not written.
 * Once the process's event-file thread runs (`./event-file-worker.ts`), a group of two or more
 * goes to it in one message instead (not with `fsync`: synced files of every session would wait
 * for one another there). Only then can this reject: the request could not be sent to the
 * thread, and nothing of the group was written.
 */
export async function writeEventFiles(
  dir: string,
  events: readonly AnyEvent[],
  fsync = false,
): Promise<PromiseSettledResult<string>[]> {
  if (!fsync && events.length > 1 && eventFileThread.ready()) {
    const r = await writeOnThread(dir, events).catch(notSent)
    if (r) return r.written
  }
  let failed = false
  let turn: Promise<void> = Promise.resolve()
  return mapLimit(events, GROUP_IN_FLIGHT, async (e): Promise<PromiseSettledResult<string>> => {
    const mine = turn
    let release!: () => void
    turn = new Promise((r) => (release = r))
    await mine
    if (failed) {
      release()
      return { status: 'rejected', reason: new Error('not written: an earlier event of its group failed') }
    }
    const text = `${JSON.stringify(e)}\n`
    try {
      await createFile(join(dir, eventFileName(e.seq, e.type)), Buffer.from(text, 'utf8'), fsync, (err) => {
        // A failed open stops the next one before it starts.
        if (err) failed = true
        release()
      })
      return { status: 'fulfilled', value: text }
    } catch (reason) {
      failed = true
      release()
      return { status: 'rejected', reason }
    }
  })
}

/** Undefined for a request the event-file thread never got or began (written another way then); any other failure rethrown. */
function notSent(err: unknown): undefined {
  if (err instanceof NotSentError) return undefined
  throw err
}

/** A group written on the event-file thread: per event as `writeEventFiles`, and its segment lines as {@link ThreadWritten}. */
export interface GroupWritten {
  written: PromiseSettledResult<string>[]
  appended?: Error | null
}

/**
 * `writeEventFiles` on the event-file thread: one message for the group; with `appendTo` (the
 * segment's open append descriptor) the thread appends the records written to it as well, in the
 * same message. Rejects with a `NotSentError` when the thread did not get or begin it (nothing was written).
 */
export async function writeOnThread(
  dir: string,
  events: readonly AnyEvent[],
  appendTo?: number,
): Promise<GroupWritten> {
  const files = events.map((e) => ({ path: join(dir, eventFileName(e.seq, e.type)), text: `${JSON.stringify(e)}\n` }))
  const { failures, appended } = await eventFileThread.write(files, appendTo)
  const written = files.map((f, i): PromiseSettledResult<string> => {
    if (i >= failures.length)
      return { status: 'rejected', reason: new Error('not written: an earlier event of its group failed') }
    const failure = failures[i]
    return failure ? { status: 'rejected', reason: failure } : { status: 'fulfilled', value: f.text }
  })
  return appended === undefined ? { written } : { written, appended }
}

export type JsonRead = { kind: 'ok'; value: unknown } | { kind: 'missing' } | { kind: 'bad'; reason: string }

/** Read and parse a JSON file, telling "absent" apart from "unreadable or not JSON". */
export async function readJsonFile(path: string): Promise<JsonRead> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if (errCode(err) === 'ENOENT') return { kind: 'missing' }
    return { kind: 'bad', reason: err instanceof Error ? err.message : String(err) }
  }
  try {
    return { kind: 'ok', value: JSON.parse(text) as unknown }
  } catch (err) {
    return { kind: 'bad', reason: `not JSON: ${err instanceof Error ? err.message : String(err)}` }
  }
}

/** Why `text` is not the record `event-<seq>-<type>.json` of `sessionId` should hold, or the event. */
export function checkRecord(text: string, seq: number, type: string, sessionId: string): AnyEvent | string {
  if (!text.endsWith('\n')) return 'torn record (no trailing newline)'
  let value: unknown
  try {
    value = JSON.parse(text.slice(0, -1))
  } catch {
    return 'torn record (not JSON)'
  }
  const problem = eventProblem(value)
  if (problem !== undefined) return `invalid event: ${problem}`
  const e = value as AnyEvent
  if (e.seq !== seq) return `content seq ${e.seq} does not match the file name's ${seq}`
  if (e.type !== type) return `content type ${e.type} does not match the file name's ${type}`
  if (e.session_id !== sessionId) return `content session_id ${JSON.stringify(e.session_id)} is not ${sessionId}`
  return e
}

export interface LogScan {
  /** The valid records with `seq > afterSeq`, contiguous from `afterSeq + 1`. */
  events: AnyEvent[]
  /** Their records as stored (each its JSON and a newline). */
  texts: string[]
  /** File names from the first bad record on (and, on a full scan, misnamed `event-*` files). */
  tail: string[]
  /** Why the first bad record is bad. */
  reason?: string
}

/** An event file of a session directory, by name. */
export interface LogEntry {
  name: string
  seq: number
  type: string
}

/**
 * The `event-*` files of `dir`: canonical ones sorted by counter (then name), and misnamed
 * ones; with `afterSeq`, only names whose counter is above it (misnamed ones then partly too).
 */
export async function listLog(dir: string, afterSeq = 0): Promise<{ entries: LogEntry[]; misnamed: string[] }> {
  return logEntries(await readdir(dir), afterSeq)
}

/** `listLog` of a directory listing already read (`names`: all its entries). */
export function logEntries(all: readonly string[], afterSeq = 0): { entries: LogEntry[]; misnamed: string[] } {
  const names = all.filter((n) => n.startsWith('event-'))
  const misnamed: string[] = []
  const entries: LogEntry[] = []
  for (const name of names) {
    // Cheap skip of records at or before the cursor (a long log read from its end).
    if (afterSeq > 0 && Number(name.slice(6, name.indexOf('-', 6))) <= afterSeq) continue
    const p = parseEventFileName(name)
    if (p) entries.push({ name, ...p })
    else misnamed.push(name)
  }
  return { entries: sortEntries(entries, afterSeq), misnamed }
}

/**
 * Entries by counter (then name). The usual log holds each counter after `afterSeq` once, with
 * no gap: then each goes to its place in one pass, without a comparison sort (a long log's
 * hundred thousand names are not compared with one another on every open).
 */
function sortEntries(entries: LogEntry[], afterSeq: number): LogEntry[] {
  const placed = new Array<LogEntry>(entries.length)
  for (const e of entries) {
    const at = e.seq - afterSeq - 1
    if (at < 0 || at >= placed.length || placed[at] !== undefined)
      return entries.sort((a, b) => a.seq - b.seq || (a.name < b.name ? -1 : 1))
    placed[at] = e
  }
  return placed
}

/** Read the log of `dir` after `afterSeq`, stopping at the first record that is not valid. */
export async function scanLog(dir: string, sessionId: string, afterSeq = 0, limit = Infinity): Promise<LogScan> {
  const { entries, misnamed } = await listLog(dir, afterSeq)
  const scan = await scanEntries(
    dir,
    sessionId,
    entries.filter((e) => e.seq > afterSeq),
    afterSeq,
    limit,
  )
  if (afterSeq === 0 && misnamed.length > 0) {
    scan.tail.push(...misnamed)
    scan.reason ??= `misnamed event files: ${misnamed.join(', ')}`
  }
  return scan
}

/**
 * Check `todo` (sorted entries) as the records after `afterSeq`: the first that is out of
 * sequence, unreadable, torn or invalid ends the valid part. At most `limit` records are read
 * (then `tail` is empty: the rest was not looked at).
 */
export async function scanEntries(
  dir: string,
  sessionId: string,
  todo: readonly LogEntry[],
  afterSeq: number,
  limit = Infinity,
): Promise<LogScan> {
  const page = todo.length > limit ? todo.slice(0, limit) : todo
  const texts = await readAll(
    dir,
    page.map((e) => e.name),
  )
  const events: AnyEvent[] = []
  const good: string[] = []
  let reason: string | undefined
  let i = 0
  for (; i < page.length; i++) {
    const { name, seq, type } = page[i]!
    const expected = afterSeq + events.length + 1
    const text = texts[i]!
    const r =
      seq !== expected
        ? `${name}: expected seq ${expected} (${seq < expected ? 'duplicate' : 'gap'})`
        : text instanceof Error
          ? `${name}: unreadable: ${text.message}`
          : checkRecord(text, seq, type, sessionId)
    if (typeof r === 'string') {
      reason = r.startsWith(name) ? r : `${name}: ${r}`
      break
    }
    events.push(r)
    good.push(text as string)
  }
  const tail = i < page.length ? todo.slice(i).map((e) => e.name) : []
  return { events, texts: good, tail, reason }
}

/** Read files in bounded parallel batches; a file that cannot be read yields its Error. */
async function readAll(dir: string, names: string[]): Promise<(string | Error)[]> {
  return mapLimit(names, 32, (n) =>
    readFile(join(dir, n), 'utf8').catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
  )
}

/** Move `names` out of the log into a fresh `quarantine/<stamp>-<rand>/` folder; returns it. */
export async function quarantine(dir: string, names: string[]): Promise<string> {
  const stamp = new Date().toISOString().replace(/[-:.]/g, '')
  const dest = join(dir, 'quarantine', `${stamp}-${randomUUID().slice(0, 8)}`)
  await mkdir(dest, { recursive: true })
  for (const n of names) await rename(join(dir, n), join(dest, n))
  return dest
}

/** `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}
