/**
 * Pidfiles of background servers (docs/http.md "Managing backgrounded servers"):
 * `CHIMERA_HOME/run/<prefix>-<port>.pid`, holding `{pid, host, port, prefix, auth_token_hash,
 * started_at, scheme}` (the master token only as `sha256:<hex>`; never a session token).
 *
 * The lock (docs/decisions/0060-pidfile-lock.md): Node has no `flock`, so the pidfile itself is
 * the lock (lock-file.ts) — written whole and hard-linked into place, which exactly one process
 * wins. A pidfile whose process is gone (crashed before removing it) is stale: the next server
 * takes it over under a guard file one taker wins — so servers racing for a stale pidfile still
 * end with one owner. A live owner makes `acquire` throw `PidfileLocked` ("already running on port N, PID M").
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { dropLock, readLock, takeLock, type LockKind } from './lock-file.ts'
import { nodeCrypto } from '../platform/builtins.ts'

export type PidfilePrefix = 'otter' | 'ferret'

export interface PidRecord {
  pid: number
  host: string
  port: number
  prefix: PidfilePrefix
  auth_token_hash: string | null
  /** Seconds since the epoch. */
  started_at: number
  scheme: 'http' | 'https'
}

export class PidfileLocked extends Error {
  override name = 'PidfileLocked'
  readonly record: PidRecord
  constructor(record: PidRecord) {
    super(`already running on port ${record.port}, PID ${record.pid}`)
    this.record = record
  }
}

export const runDir = (home: string): string => join(home, 'run')
export const pidfilePath = (home: string, prefix: PidfilePrefix, port: number): string =>
  join(runDir(home), `${prefix}-${port}.pid`)
export const tokenHash = (token: string | undefined): string | null =>
  token === undefined ? null : `sha256:${nodeCrypto().createHash('sha256').update(token, 'utf8').digest('hex')}`

/** True when `pid` names a running process (that is not known to be some other program). */
export function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  // A zombie has exited (only its parent has not collected it yet): it serves nothing.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return false
  } catch {
    // no procfs: signal 0 is all we know
  }
  // A PID reused by an unrelated program after a crash is not our server (Linux: its command line says).
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    return cmdline === '' || /chimera|node/i.test(cmdline)
  } catch {
    return true
  }
}

function parseRecord(text: string): PidRecord | undefined {
  try {
    const r = JSON.parse(text) as PidRecord
    return r && typeof r === 'object' && Number.isSafeInteger(r.pid) && Number.isSafeInteger(r.port) ? r : undefined
  } catch {
    return undefined
  }
}

/** The pidfile as a lock (lock-file.ts): live while its server runs; this process's own record is stale. */
const PIDFILE_LOCK: LockKind<PidRecord> = {
  parse: parseRecord,
  live: (held) => isAlive(held.pid) && held.pid !== process.pid,
  same: (a, b) => a.pid === b.pid && a.started_at === b.started_at,
}

export function readPidfile(path: string): PidRecord | undefined {
  return readLock(path, PIDFILE_LOCK)
}

/** Create the pidfile for `record`, taking over a stale one; throws `PidfileLocked` when a live server holds it. */
export function acquirePidfile(home: string, record: PidRecord): string {
  mkdirSync(runDir(home), { recursive: true, mode: 0o700 })
  const path = pidfilePath(home, record.prefix, record.port)
  const r = takeLock(path, record, PIDFILE_LOCK)
  if (r.kind === 'held') throw new PidfileLocked(r.record)
  return path
}

/** Remove the pidfile if it is still ours. */
export function releasePidfile(path: string, record: PidRecord): void {
  dropLock(path, record, PIDFILE_LOCK)
}

/** Every pidfile of `prefix` under CHIMERA_HOME/run, by port. */
export function listPidfiles(
  home: string,
  prefix: PidfilePrefix,
): { path: string; port: number; record: PidRecord | undefined }[] {
  let names: string[]
  try {
    names = readdirSync(runDir(home))
  } catch {
    return []
  }
  const re = new RegExp(`^${prefix}-(\\d{1,5})\\.pid$`)
  return names
    .map((n) => ({ n, m: re.exec(n) }))
    .filter((x): x is { n: string; m: RegExpExecArray } => x.m !== null)
    .map(({ n, m }) => ({
      path: join(runDir(home), n),
      port: Number(m[1]),
      record: readPidfile(join(runDir(home), n)),
    }))
    .sort((a, b) => a.port - b.port)
}
