/**
 * Where the event log lives on disk (docs/core.md) and the names inside it. Session ids are the
 * only untrusted part of a store path, so every path built from one is checked with
 * `isSessionId` first: the strict `<agent>-<YYYYMMDDTHHMMSSZ>-<uuid v4>` shape leaves no room
 * for `..`, separators or NUL.
 */
import { randomUUID } from '../platform/random.ts'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { EventType } from '../../generated/schemas.gen.ts'
import { EVENT_TYPE_NAMES } from '../../generated/event-facts.gen.ts'
import { ChimeraError, shownId } from '../errors.ts'
import type { AgentPrefix } from './types.ts'

/** Every agent prefix a session directory may carry. */
export const AGENT_PREFIXES: readonly AgentPrefix[] = ['otter', 'ferret', 'mink']

const SESSION_ID_RE =
  /^(otter|ferret|mink)-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const EVENT_FILE_RE = /^event-(\d{6,})-([a-z_]+)\.json$/
const EVENT_TYPES: ReadonlySet<string> = new Set(EVENT_TYPE_NAMES)

/** `CHIMERA_HOME`, or `~/.chimera` when unset or empty. */
export function chimeraHome(env: NodeJS.ProcessEnv = process.env): string {
  const v = env.CHIMERA_HOME
  return v !== undefined && v !== '' ? v : join(homedir(), '.chimera')
}

/** The event-log root under a Chimera home: `<home>/eventlog`. */
export function eventlogRoot(home: string): string {
  return join(home, 'eventlog')
}

/** One session's directory; throws a `ChimeraError` (`invalid_session_id`) for anything but a valid id. */
export function sessionDir(root: string, id: string): string {
  if (!isSessionId(id)) throw new ChimeraError('invalid_session_id', `invalid session id: ${shownId(id)}`)
  return join(root, id)
}

/** `event-NNNNNN-<type>.json`: the counter is zero-padded to 6 digits and grows past 999999. */
export function eventFileName(seq: number, type: EventType): string {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new Error(`invalid event seq: ${seq}`)
  if (!EVENT_TYPES.has(type)) throw new Error(`invalid event type: ${JSON.stringify(type)}`)
  return `event-${String(seq).padStart(6, '0')}-${type}.json`
}

/** The counter and type of an event file name; undefined unless `name` is exactly canonical. */
export function parseEventFileName(name: string): { seq: number; type: EventType } | undefined {
  const m = EVENT_FILE_RE.exec(name)
  if (!m || !EVENT_TYPES.has(m[2]!)) return undefined
  const digits = m[1]!
  const seq = Number(digits)
  // Canonical padding (what `eventFileName` writes): exactly 6 digits, or more without a leading 0.
  if (!Number.isSafeInteger(seq) || seq < 1 || (digits.length > 6 && digits[0] === '0')) return undefined
  return { seq, type: m[2] as EventType }
}

/** `YYYYMMDDTHHMMSSZ` in UTC. */
function compactUtc(now: Date): string {
  return now
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '')
}

/** A fresh session id: `<agent>-<YYYYMMDDTHHMMSSZ>-<uuid v4>`. */
export function newSessionId(agent: AgentPrefix, now: Date = new Date()): string {
  if (!AGENT_PREFIXES.includes(agent)) throw new Error(`invalid agent prefix: ${JSON.stringify(agent)}`)
  return `${agent}-${compactUtc(now)}-${randomUUID()}`
}

/**
 * Ids found valid lately (up to 1,024; all forgotten when full): a live session's id is checked on
 * every event and store call.
 */
const validIds = new Set<string>()
const VALID_IDS_KEPT = 1024

/** True only for the exact `newSessionId` shape with a real calendar timestamp. */
export function isSessionId(s: unknown): s is string {
  if (typeof s !== 'string') return false
  if (validIds.has(s)) return true
  const m = SESSION_ID_RE.exec(s)
  if (!m) return false
  const [y, mo, d, h, mi, se] = m.slice(2, 8).map(Number) as [number, number, number, number, number, number]
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, se))
  const ok =
    t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && h < 24 && mi < 60 && se < 60
  if (ok) {
    if (validIds.size >= VALID_IDS_KEPT) validIds.clear()
    validIds.add(s)
  }
  return ok
}

/** The agent prefix of a valid session id. */
export function agentOf(id: string): AgentPrefix | undefined {
  return isSessionId(id) ? (id.slice(0, id.indexOf('-')) as AgentPrefix) : undefined
}

/** The creation instant encoded in a valid session id (ms since the epoch). */
export function sessionIdTime(id: string): number | undefined {
  const m = SESSION_ID_RE.exec(id)
  if (!m || !isSessionId(id)) return undefined
  const [y, mo, d, h, mi, se] = m.slice(2, 8).map(Number) as [number, number, number, number, number, number]
  return Date.UTC(y, mo - 1, d, h, mi, se)
}
