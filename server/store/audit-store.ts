/**
 * Where `always` / `never` permission decisions are kept (the permission audit log), behind an
 * interface so another engine can hold it next to the event log. The file store appends JSON
 * lines to `CHIMERA_HOME/permissions/audit.jsonl` — a directory the Bash sandbox never mounts
 * and the file tools refuse — and the memory store keeps them for tests and embedders.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { errCode } from './file-log.ts'

/** One remembered decision: a tool with these normalised arguments, in this working directory. */
export interface AuditRecord {
  ts: string
  session_id: string
  /** The session's working directory (decisions are scoped to it). */
  cwd: string
  tool: string
  key: string
  decision: 'always' | 'never'
}

export interface AuditStore {
  /** Every valid record, oldest first (a torn or foreign line is skipped). */
  load(): Promise<AuditRecord[]>
  append(record: AuditRecord): Promise<void>
}

const str = (v: unknown): v is string => typeof v === 'string'

/** True for a well-formed record (older records without a working directory are not). */
export function isAuditRecord(v: unknown): v is AuditRecord {
  if (typeof v !== 'object' || v === null) return false
  const r = v as Record<string, unknown>
  return (
    str(r.ts) &&
    str(r.session_id) &&
    str(r.cwd) &&
    str(r.tool) &&
    str(r.key) &&
    (r.decision === 'always' || r.decision === 'never')
  )
}

/** The records among stored lines; a blank, torn (a crash) or foreign line is skipped. */
export function auditRecords(lines: readonly string[]): AuditRecord[] {
  const out: AuditRecord[] = []
  for (const line of lines) {
    if (!line.trim()) continue
    try {
      const r: unknown = JSON.parse(line)
      if (isAuditRecord(r)) out.push(r)
    } catch {
      // not a whole record of ours
    }
  }
  return out
}

export class FileAuditStore implements AuditStore {
  readonly path: string
  constructor(path: string) {
    this.path = path
  }

  async load(): Promise<AuditRecord[]> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (err) {
      if (errCode(err) === 'ENOENT') return []
      throw err
    }
    return auditRecords(text.split('\n'))
  }

  async append(record: AuditRecord): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true })
    await appendFile(this.path, `${JSON.stringify(record)}\n`, { mode: 0o600 })
  }
}

export class MemoryAuditStore implements AuditStore {
  readonly records: AuditRecord[] = []
  async load(): Promise<AuditRecord[]> {
    return [...this.records]
  }
  async append(record: AuditRecord): Promise<void> {
    this.records.push({ ...record })
  }
}
