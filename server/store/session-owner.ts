/**
 * One writer per session across processes sharing a CHIMERA_HOME (docs/core.md "One writer per
 * session", docs/decisions/0431-one-writer-per-session.md): the file store takes a session's
 * owner marker, `owner.json` in the session directory, before the first operation that writes or
 * repairs the session, holds it while the process serves the session and drops it when the
 * session is released. The marker is a lock file (lock-file.ts, the pidfile's logic, run with
 * `fs.promises` here): linked into place whole, holding who has it; one whose holder is gone is
 * stale and taken over.
 *
 * The holder keeps its markers fresh: every `OWNER_HEARTBEAT_MS` it sets each one's modification
 * time (one timer per store). A marker not refreshed for `OWNER_STALE_MS` is stale whoever it
 * names: a process on another host, in another PID namespace (a container, a Flatpak sandbox)
 * or stopped is taken over after that window. Within the window a holder is live unless this
 * process can see that it is gone: same host and same PID namespace, and its PID no longer runs
 * as the process recorded (Linux: the start time in `/proc/<pid>/stat`; where procfs is missing,
 * as on macOS, only whether the PID runs) or the machine has rebooted since (the boot id). This
 * process's own PID is never another holder: within one process the store instances share the
 * marker.
 */
import { randomBytes } from '../platform/random.ts'
import { readFileSync, readlinkSync } from 'node:fs'
import { readFile, readlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { ChimeraError } from '../errors.ts'
import { dropLockAsync, freshLock, readLock, readLockAsync, takeLockAsync, type LockKind } from './lock-file.ts'
import { isAlive } from './pidfile.ts'

export const OWNER_FILE = 'owner.json'

/** How often a holder refreshes the markers it holds. */
export const OWNER_HEARTBEAT_MS = 10_000
/** A marker not refreshed for this long is stale whatever it says (three missed beats). */
export const OWNER_STALE_MS = 3 * OWNER_HEARTBEAT_MS

/** Who holds a session (the marker's record). */
export interface SessionHolder {
  pid: number
  host: string
  /** The process's start (clock ticks after boot, `/proc/<pid>/stat` field 22); absent where unknown. */
  proc_start?: string
  /** The machine's boot id (`/proc/sys/kernel/random/boot_id`); absent where unknown. */
  boot_id?: string
  /** The process's PID namespace (`/proc/self/ns/pid`): a PID names this process only there. */
  pid_ns?: string
  /** The agent of the process that holds it (`otter`, `ferret`, `mink`), when it says. */
  agent?: string
  /** When it took the session (ISO-8601). */
  since: string
  /** Tells this holding apart from any other (the record moved aside is the one judged stale). */
  token: string
}

/** The start time in a `/proc/<pid>/stat` text. */
function startOf(stat: string): string | undefined {
  // After the command name (which may hold spaces): field 3 on; the start time is field 22.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
}

/** A process's start time as `/proc/<pid>/stat` gives it; undefined without procfs. */
export function processStart(pid: number): string | undefined {
  try {
    return startOf(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return undefined
  }
}

type Identity = { pid: number; host: string; proc_start?: string; boot_id?: string; pid_ns?: string }

let self: Identity | undefined
let selfRead: Promise<unknown> | undefined

const PROC_BOOT_ID = '/proc/sys/kernel/random/boot_id'
const PROC_PID_NS = '/proc/self/ns/pid'

function readOr(read: () => string): string | undefined {
  try {
    return read().trim() || undefined
  } catch {
    return undefined
  }
}

function identity(boot: string | undefined, ns: string | undefined, start: string | undefined): Identity {
  return {
    pid: process.pid,
    host: hostname(),
    ...(start ? { proc_start: start } : {}),
    ...(boot ? { boot_id: boot } : {}),
    ...(ns ? { pid_ns: ns } : {}),
  }
}

/** This process as a holder (read once; `ownIdentity` reads it without blocking). */
function thisProcess(): Identity {
  if (self?.pid === process.pid) return self
  self = identity(
    readOr(() => readFileSync(PROC_BOOT_ID, 'utf8')),
    readOr(() => readlinkSync(PROC_PID_NS)),
    processStart(process.pid),
  )
  return self
}

/**
 * Read this process's identity with `fs.promises` (once), so that taking a marker (the file
 * store does this first) reads nothing synchronously on the session path, `session/new`
 * included.
 */
export function ownIdentity(): Promise<unknown> {
  if (self?.pid === process.pid) return Promise.resolve()
  const or = (p: Promise<string>): Promise<string | undefined> =>
    p.then(
      (t) => t.trim() || undefined,
      () => undefined,
    )
  selfRead ??= Promise.all([
    or(readFile(PROC_BOOT_ID, 'utf8')),
    or(readlink(PROC_PID_NS)),
    or(readFile('/proc/self/stat', 'utf8')).then((t) => (t === undefined ? undefined : startOf(t))),
  ]).then(([boot, ns, start]) => {
    if (self?.pid !== process.pid) self = identity(boot, ns, start)
  })
  return selfRead
}

/** A new holding for this process. */
export function ownerRecord(agent?: string): SessionHolder {
  return {
    ...thisProcess(),
    ...(agent ? { agent } : {}),
    since: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  }
}

/**
 * True while the holder may still be writing the session (see the file comment): `mtimeMs` is
 * the marker's modification time, its last heartbeat.
 */
export function holderAlive(h: SessionHolder, mtimeMs: number, now = Date.now()): boolean {
  if (now - mtimeMs > OWNER_STALE_MS) return false
  const me = thisProcess()
  if (h.host !== me.host) return true
  if (h.boot_id !== undefined && me.boot_id !== undefined && h.boot_id !== me.boot_id) return false
  // Its PID means nothing in this namespace (or it did not say which): the heartbeat decides.
  if (h.pid_ns !== me.pid_ns) return true
  if (h.pid === me.pid) return false
  if (!isAlive(h.pid)) return false
  const start = h.proc_start === undefined ? undefined : processStart(h.pid)
  return start === undefined || start === h.proc_start
}

function parseHolder(text: string): SessionHolder | undefined {
  try {
    const r = JSON.parse(text) as SessionHolder
    return r &&
      typeof r === 'object' &&
      Number.isSafeInteger(r.pid) &&
      typeof r.host === 'string' &&
      typeof r.since === 'string' &&
      typeof r.token === 'string'
      ? r
      : undefined
  } catch {
    return undefined
  }
}

export const OWNER_LOCK: LockKind<SessionHolder> = {
  parse: parseHolder,
  live: holderAlive,
  same: (a, b) => a.token === b.token && a.pid === b.pid,
}

/**
 * Take the owner marker of the session in `dir` for `record`: undefined when it is now held by
 * `record`, else the live holder. Throws ENOENT when the directory does not exist.
 */
export async function takeOwner(dir: string, record: SessionHolder): Promise<SessionHolder | undefined> {
  await ownIdentity()
  const r = await takeLockAsync(join(dir, OWNER_FILE), record, OWNER_LOCK)
  return r.kind === 'held' ? r.record : undefined
}

/** The marker of a session directory not made yet, for `record` (lock-file.ts `freshLock`). */
export function freshOwner(dir: string, record: SessionHolder): { path: string; tmp: string; text: string } {
  return freshLock(join(dir, OWNER_FILE), record)
}

/** Drop the marker if `record` still holds it. */
export function dropOwner(dir: string, record: SessionHolder): Promise<void> {
  return dropLockAsync(join(dir, OWNER_FILE), record, OWNER_LOCK)
}

/** The marker's holder, if any (live or not). */
export function readOwner(dir: string): SessionHolder | undefined {
  return readLock(join(dir, OWNER_FILE), OWNER_LOCK)
}

/** The marker's holder when it is live (see the file comment); undefined when free or stale. */
export async function liveOwner(dir: string): Promise<SessionHolder | undefined> {
  await ownIdentity()
  const found = await readLockAsync(join(dir, OWNER_FILE), OWNER_LOCK)
  return found && OWNER_LOCK.live(found.record, found.mtimeMs) ? found.record : undefined
}

/** {@link readOwner} with `fs.promises`. */
export async function readOwnerAsync(dir: string): Promise<SessionHolder | undefined> {
  return (await readLockAsync(join(dir, OWNER_FILE), OWNER_LOCK))?.record
}

/**
 * The refusal of a write to a session another live process holds: `session_busy`, naming the
 * holder so a person knows what to close.
 */
export function sessionHeld(sessionId: string, h: SessionHolder): ChimeraError<'session_busy'> {
  const where = h.host === thisProcess().host ? '' : ` on ${h.host}`
  const agent = h.agent ? `, chimera ${h.agent}` : ''
  return new ChimeraError(
    'session_busy',
    `session ${sessionId} is open in another chimera process (PID ${h.pid}${agent}${where}, since ${h.since}); close it there, or wait until that process lets it go`,
    {
      resource: sessionId,
      detail: { holder: { pid: h.pid, host: h.host, since: h.since, ...(h.agent ? { agent: h.agent } : {}) } },
    },
  )
}
