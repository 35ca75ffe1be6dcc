/**
 * ripgrep for the Grep tool: the model's regular expression runs in ripgrep's Rust regex engine
 * (finite automata, linear time in the input; no backtracking, no look-around), in a separate
 * process that a cancel kills, never on the event loop. ripgrep does not open anything itself:
 * Grep opens and checks each file (safe-open.ts) and hands ripgrep the open descriptors, which
 * it reads as `/dev/fd/N`. The binary comes from the `@vscode/ripgrep` package (its platform
 * package ships it in the npm tarball; nothing is downloaded at install time). See
 * docs/decisions/0021.
 */
import type { ChildProcessByStdio } from 'node:child_process'
import { childProcess } from '../platform/builtins.ts'
import { accessSync, constants } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'
import type { Readable } from 'node:stream'
import { toolProcessEnv } from '../platform/process-env.ts'
import { errorText } from './outcome.ts'
import { signalGroup, supervise } from '../platform/supervisor.ts'

/** Longest part of a matched line ripgrep sends back (the rest is cut with a note). */
export const RG_MAX_COLUMNS = 600

let located: Promise<{ ok: true; path: string } | { ok: false; error: string }> | undefined

const executable = (p: string): boolean => {
  try {
    accessSync(p, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The ripgrep executable: `CHIMERA_RG` when set, else the one `@vscode/ripgrep` installed, else
 * `rg` on PATH. Looked up once.
 */
export function locateRipgrep(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  located ??= (async () => {
    const explicit = Object.hasOwn(env, 'CHIMERA_RG') ? env.CHIMERA_RG : undefined
    if (explicit)
      return executable(explicit)
        ? { ok: true, path: explicit }
        : { ok: false, error: `CHIMERA_RG=${explicit} is not an executable file` }
    let why = ''
    try {
      const { rgPath } = (await import('@vscode/ripgrep')) as { rgPath: string }
      if (executable(rgPath)) return { ok: true, path: rgPath }
      why = `${rgPath} is not executable`
    } catch (e) {
      why = errorText(e)
    }
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (dir && isAbsolute(dir) && executable(join(dir, 'rg'))) return { ok: true, path: join(dir, 'rg') }
    }
    return {
      ok: false,
      error: `ripgrep is not available (${why}); reinstall with \`npm ci\` (optional dependencies included) or install ripgrep`,
    }
  })()
  return located
}

/** One search of up to a batch of open files. */
export interface RipgrepRun {
  rg: string
  pattern: string
  caseInsensitive: boolean
  /** Open descriptors of the files to search, in order. */
  fds: readonly number[]
  signal: AbortSignal
  /**
   * A matching line of file `index` (into `fds`), 1-based `line`, its text (cut at
   * {@link RG_MAX_COLUMNS}). Return false to stop the search (ripgrep is killed).
   */
  onMatch(index: number, line: number, text: string): boolean
}

/** How a run ended: `stopped` when onMatch asked to stop; an error for a bad pattern. */
export type RipgrepResult = { ok: true; stopped: boolean; cancelled: boolean } | { ok: false; error: string }

/** Search the files of `run` with ripgrep. Never rejects. */
export function runRipgrep(run: RipgrepRun): Promise<RipgrepResult> {
  const args = [
    '--no-config',
    '--no-messages',
    '--threads',
    '1',
    '--text',
    '--crlf',
    '--null',
    '--line-number',
    '--with-filename',
    '--no-heading',
    '--color',
    'never',
    '--max-columns',
    String(RG_MAX_COLUMNS),
    '--max-columns-preview',
    ...(run.caseInsensitive ? ['--ignore-case'] : []),
    '--regexp',
    run.pattern,
    '--',
    ...(run.fds.length ? run.fds.map((_, i) => `/dev/fd/${i + 3}`) : ['/dev/null']),
  ]
  return new Promise<RipgrepResult>((resolve) => {
    let stopped = false
    let cancelled = false
    let stderr = ''
    let pending = ''
    let done = false
    let child: ChildProcessByStdio<null, Readable, Readable>
    try {
      child = childProcess().spawn(run.rg, args, {
        stdio: ['ignore', 'pipe', 'pipe', ...run.fds] as ['ignore', 'pipe', 'pipe'],
        detached: true,
        env: toolProcessEnv({ home: '/nonexistent' }),
      })
    } catch (e) {
      resolve({ ok: false, error: `could not start ripgrep: ${errorText(e)}` })
      return
    }
    const pid = child.pid
    const untrack = pid === undefined ? () => {} : supervise(pid, 'tool')
    const kill = (): void => {
      if (pid !== undefined) signalGroup(pid, 'SIGKILL')
    }
    const onAbort = (): void => {
      cancelled = true
      kill()
    }
    if (run.signal.aborted) onAbort()
    else run.signal.addEventListener('abort', onAbort, { once: true })
    const line = (l: string): void => {
      if (stopped || cancelled) return
      const nul = l.indexOf('\0')
      if (nul === -1) return // "binary file matches" and other notes
      const m = /^\/dev\/fd\/(\d+)$/.exec(l.slice(0, nul))
      const rest = l.slice(nul + 1)
      const colon = rest.indexOf(':')
      if (!m || colon === -1) return
      const index = Number(m[1]) - 3
      const lineNo = Number(rest.slice(0, colon))
      let text = rest.slice(colon + 1)
      if (text.endsWith('\r')) text = text.slice(0, -1)
      if (!run.onMatch(index, lineNo, text)) {
        stopped = true
        kill()
      }
    }
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      pending += chunk
      let nl = pending.indexOf('\n')
      while (nl !== -1) {
        line(pending.slice(0, nl))
        pending = pending.slice(nl + 1)
        nl = pending.indexOf('\n')
      }
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (c: string) => {
      if (stderr.length < 8192) stderr += c
    })
    const finish = (r: RipgrepResult): void => {
      if (done) return
      done = true
      untrack()
      run.signal.removeEventListener('abort', onAbort)
      resolve(r)
    }
    child.on('error', (e) => finish({ ok: false, error: `could not run ripgrep: ${errorText(e)}` }))
    child.on('close', (code) => {
      if (pending !== '') line(pending)
      if (stopped || cancelled) return finish({ ok: true, stopped, cancelled })
      // 2 with nothing on stderr: a file could not be read (messages are off); the rest stands.
      if (code === 0 || code === 1 || (code === 2 && stderr.trim() === ''))
        return finish({ ok: true, stopped: false, cancelled: false })
      finish({ ok: false, error: stderr.trim().replace(/^rg: /, '') || `ripgrep exited with code ${code}` })
    })
  })
}
