/**
 * `chimera otter serve status` and `serve stop` (and the ferret equivalents): list and stop the
 * background servers recorded under CHIMERA_HOME/run (docs/http.md "Managing backgrounded servers").
 *
 * status: one line per pidfile, `<prefix> port=N pid=M alive=yes|no (stale) scheme=S auth=yes|no <path>`.
 * stop: SIGTERM, up to `--serve-timeout` seconds for the process to go, then SIGKILL (never
 * first). A stale pidfile is removed. Exit 0 when every target stopped (or none matched), 1 when
 * one survived both signals, 2 on a usage error (several servers and neither --port nor --all).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { chimeraHome } from '../store/paths.ts'
import { isAlive, listPidfiles, releasePidfile, type PidfilePrefix, type PidRecord } from '../store/pidfile.ts'
import { UsageError, parsePort } from './args.ts'
import { output } from './output.ts'

export const DEFAULT_SERVE_TIMEOUT_S = 10

export function statusLines(prefix: PidfilePrefix, home = chimeraHome()): string[] {
  return listPidfiles(home, prefix).map(({ path, port, record }) => {
    const alive = record !== undefined && isAlive(record.pid)
    const pid = record?.pid ?? '?'
    const scheme = record?.scheme ?? '?'
    const auth = record ? (record.auth_token_hash ? 'yes' : 'no') : '?'
    return `${prefix} port=${port} pid=${pid} alive=${alive ? 'yes' : 'no (stale)'} scheme=${scheme} auth=${auth} ${path}`
  })
}

export function runStatus(prefix: PidfilePrefix, out: (s: string) => void = output): number {
  const lines = statusLines(prefix)
  for (const l of lines) out(`${l}\n`)
  if (!lines.length) process.stderr.write(`no ${prefix} servers recorded under ${chimeraHome()}/run\n`)
  return 0
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true
    await sleep(Math.min(50, Math.max(1, deadline - Date.now())))
  }
  return !isAlive(pid)
}

const signal = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(pid, sig)
  } catch {
    // already gone
  }
}

/** SIGTERM, then SIGKILL after `timeoutMs`; the outcome line and whether the process is gone. */
async function stopOne(
  prefix: PidfilePrefix,
  path: string,
  port: number,
  record: PidRecord | undefined,
  timeoutMs: number,
): Promise<{ line: string; ok: boolean }> {
  const head = `${prefix} port=${port} pid=${record?.pid ?? '?'}`
  if (!record || !isAlive(record.pid)) {
    releasePidfile(path, record ?? ({} as PidRecord))
    return { line: `${head} stale pidfile removed`, ok: true }
  }
  signal(record.pid, 'SIGTERM')
  if (await waitGone(record.pid, timeoutMs)) {
    releasePidfile(path, record)
    return { line: `${head} stopped (SIGTERM)`, ok: true }
  }
  signal(record.pid, 'SIGKILL')
  // SIGKILL cannot be caught: a process still there after this is one we may not signal.
  if (await waitGone(record.pid, 2000)) {
    releasePidfile(path, record)
    return { line: `${head} killed (SIGKILL after ${timeoutMs / 1000} s)`, ok: true }
  }
  return { line: `${head} still running after SIGTERM and SIGKILL`, ok: false }
}

export interface StopArgs {
  port?: string
  all?: boolean
  'serve-timeout'?: string
}

export function parseServeTimeout(v: string | undefined): number {
  if (v === undefined) return DEFAULT_SERVE_TIMEOUT_S * 1000
  const n = Number(v)
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 86_400)
    throw new UsageError(`--serve-timeout must be a number of seconds (0-86400), got ${JSON.stringify(v)}`)
  return n * 1000
}

export async function runStop(
  prefix: PidfilePrefix,
  args: StopArgs,
  out: (s: string) => void = output,
): Promise<number> {
  const timeoutMs = parseServeTimeout(args['serve-timeout'])
  if (args.port !== undefined && args.all) throw new UsageError('give --port or --all, not both')
  const port = args.port !== undefined ? parsePort(args.port, 0) : undefined
  let targets = listPidfiles(chimeraHome(), prefix)
  if (port !== undefined) targets = targets.filter((t) => t.port === port)
  else if (!args.all && targets.length > 1) {
    throw new UsageError(
      `${targets.length} ${prefix} servers are recorded (ports ${targets.map((t) => t.port).join(', ')}): disambiguate with --port N or --all`,
    )
  }
  let ok = true
  const results = await Promise.all(targets.map((t) => stopOne(prefix, t.path, t.port, t.record, timeoutMs)))
  for (const r of results) {
    out(`${r.line}\n`)
    ok &&= r.ok
  }
  return ok ? 0 : 1
}
