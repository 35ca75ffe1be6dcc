/**
 * `chimera otter sessions list|show` and `chimera otter share`: the persisted sessions of
 * `$CHIMERA_HOME`'s store, read without changing anything (a server may be writing to them at
 * the same time). The list is the one listing every surface uses (store/listing.ts), with no
 * live sessions (this process has none). A bad flag value is a usage error; an unknown session
 * or a failed share is an error (exit 1). Only the command's output goes to stdout.
 */
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import type { AnyEvent } from '../events/event-types.ts'
import type { EventStore } from '../store/types.ts'
import { share } from '../share/share.ts'
import { ChimeraError } from '../errors.ts'
import { readSessionDetail, type TranscriptFormat } from '../share/transcript.ts'
import { listSessions as listStored } from '../store/listing.ts'
import { withConfiguredStore } from '../store/open.ts'
import { chimeraHome } from '../store/paths.ts'
import { parseSince } from '../store/since.ts'
import { UsageError } from './args.ts'
import { output } from './output.ts'
import { cell, table } from './table.ts'

/** Run `use` over the sessions' store: CHIMERA_STORE's Redis, else the file store of CHIMERA_HOME. */
const withStore = <T>(use: (store: EventStore) => Promise<T>): Promise<T> => withConfiguredStore(chimeraHome(), use)

/** A positive integer flag value. */
export function positiveInt(flag: string, v: string, max = 1_000_000): number {
  const n = Number(v)
  if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < 1 || n > max)
    throw new UsageError(`${flag} must be an integer from 1 to ${max}, got ${JSON.stringify(v)}`)
  return n
}

/** A `--since` value as an instant. */
export function sinceFlag(v: string | undefined): Date | undefined {
  if (v === undefined) return undefined
  try {
    return parseSince(v)
  } catch (err) {
    throw new UsageError(`--since: ${(err as Error).message}`)
  }
}

const result = (s: { success?: boolean | null }): string =>
  s.success === true ? 'ok' : s.success === false ? 'failed' : '-'
const dollars = (v: number | null | undefined): string =>
  typeof v === 'number' ? `$${Math.round(v * 1e6) / 1e6}` : '-'

export async function listSessions(args: {
  limit: string
  since?: string
  model?: string
  json: boolean
}): Promise<void> {
  const limit = positiveInt('--limit', args.limit)
  const since = sinceFlag(args.since)
  const { sessions }: { sessions: SessionSummary[] } = await withStore((store) =>
    listStored(store, {
      limit,
      ...(since ? { since } : {}),
      ...(args.model !== undefined ? { model: args.model } : {}),
    }),
  )
  if (args.json) return output(JSON.stringify({ sessions }, null, 2))
  if (sessions.length === 0) return output('no sessions')
  output(
    table(
      ['SESSION', 'STARTED', 'MODEL', 'RESULT', 'COST', 'STEPS', 'TOOLS', 'PROMPT'],
      sessions.map((s) => [
        s.session_id,
        s.started_at,
        s.model,
        result(s),
        dollars(s.cost_usd),
        s.steps ?? 0,
        s.tool_calls ?? 0,
        s.prompt ?? '',
      ]),
      [80, 30, 40, 8, 14, 8, 8, 60],
    ),
  )
}

/** One line about an event: its text, tool, result or message. */
function brief(e: AnyEvent): string {
  const d = e.data as Record<string, unknown>
  if (e.type === 'tool_call' || e.type === 'tool_start') return `${String(d.tool)} ${JSON.stringify(d.args)}`
  if (e.type === 'tool_result')
    return `${String(d.tool)} ${d.ok ? 'ok' : 'error'}: ${String(d.ok ? (d.output ?? '') : (d.error ?? ''))}`
  if (e.type === 'usage') return JSON.stringify((d.usage as object) ?? {})
  for (const k of ['text', 'output', 'message', 'prompt', 'path', 'decision', 'summary'])
    if (typeof d[k] === 'string') return d[k] as string
  if (typeof d.old === 'string') return `${d.old} → ${String(d.new)}`
  return ''
}

export async function showSession(args: { id: string; json: boolean }): Promise<void> {
  const detail = await withStore((store) => readSessionDetail(store, args.id))
  if (args.json) return output(JSON.stringify(detail, null, 2))
  const s = detail.summary
  const head: [string, unknown][] = [
    ['session', detail.session_id],
    ...(s.title ? [['title', s.title] as [string, unknown]] : []),
    ['model', s.model],
    ['started', s.started_at],
    ['ended', s.ended_at],
    ['result', result(s)],
    ['cost', dollars(s.cost_usd)],
    ['steps', s.steps ?? 0],
    ['tool calls', s.tool_calls ?? 0],
    ['directory', s.working_dir],
    ['prompt', s.prompt],
    ['events', detail.events.length],
  ]
  const top = head.map(([k, v]) => `${k.padEnd(11)}${cell(v, 200)}`).join('\n')
  const events = table(
    ['#', 'TURN', 'TYPE', ''],
    detail.events.map((e) => [e.seq, e.turn, e.type, brief(e)]),
    [10, 6, 20, 120],
  )
  output(`${top}\n\n${events}`)
}

export async function shareSession(args: {
  id: string
  sink?: string
  format: string
  url?: string
  timeout: string
}): Promise<void> {
  const seconds = Number(args.timeout)
  if (!/^[0-9]+(\.[0-9]+)?$/.test(args.timeout) || !(seconds > 0) || seconds > 600)
    throw new UsageError(`--timeout must be a number of seconds (0 < n ≤ 600), got ${JSON.stringify(args.timeout)}`)
  const sink = args.sink ?? (process.env.OTTER_SHARE_URL ? 'http' : 'file')
  const detail = await withStore((store) => readSessionDetail(store, args.id))
  try {
    const r = await share(detail, {
      sink,
      format: args.format as TranscriptFormat,
      ...(args.url !== undefined ? { url: args.url } : {}),
      timeoutMs: Math.round(seconds * 1000),
    })
    if (r.sink === 'stdout') return output(r.body ?? '')
    if (r.sink === 'file') return output(r.path ?? '')
    return output(JSON.stringify(r))
  } catch (err) {
    if (ChimeraError.is(err, 'invalid_share')) throw new UsageError(err.message)
    throw err
  }
}
