/**
 * The one process supervisor. Every child process this process starts that may start others
 * (Bash commands, ripgrep, language servers, MCP servers, the kit's targets) is spawned
 * `detached`, so it leads a process group of its own (pgid = its pid) and whatever it starts is
 * in that group. Each live group is supervised here, under its kind, until its owner releases
 * it; a group is stopped whole (SIGTERM, then SIGKILL), and a sandbox leader with its whole
 * tree at once ({@link killTree}).
 *
 * When this process exits with groups still supervised (a crash path, a second signal, a
 * shutdown that did not reach them), each is killed synchronously in the `exit` hook, so no
 * child outlives it; the server's shutdown also kills what tools left ({@link killSupervised}).
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Who started a group: a tool (Bash, ripgrep, a language server), an MCP server, a kit target. */
export type ProcessKind = 'tool' | 'mcp' | 'target'

/** Signal the group led by `pgid`; false when none of its processes is left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

/** True while any process of group `pgid` exists (zombies included). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Every descendant of `pid` (children, grandchildren …), read from /proc; empty where there is
 * no /proc. A process whose parent already died (re-parented to init) is not found.
 */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>()
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    // pid (comm) state ppid …; comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    const list = children.get(ppid) ?? []
    list.push(Number(name))
    children.set(ppid, list)
  }
  const out: number[] = []
  const queue = [pid]
  while (queue.length > 0 && out.length < 100_000) {
    for (const c of children.get(queue.shift() as number) ?? []) {
      out.push(c)
      queue.push(c)
    }
  }
  return out
}

/**
 * Kill `pid`, its group and every descendant at once, with SIGKILL. The leader is stopped first
 * so it cannot start another child meanwhile. For a bwrap leader this takes the sandbox's PID
 * namespace down even when bwrap has not yet armed its own die-with-parent (a cancel in the
 * first milliseconds): killing a namespace's first process kills everything in it.
 */
export function killTree(pid: number): void {
  try {
    process.kill(pid, 'SIGSTOP')
  } catch {
    // already gone
  }
  for (const p of descendants(pid)) {
    try {
      process.kill(p, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  signalGroup(pid, 'SIGKILL')
}

const live = new Map<number, { kind: ProcessKind; kill: () => void }>()
let hooked = false

/**
 * Supervise the group led by `pgid` until the returned function (or {@link release}) is called.
 * `kill` is how it is ended at shutdown and exit (default: SIGKILL to the group).
 */
export function supervise(
  pgid: number,
  kind: ProcessKind,
  kill: () => void = () => void signalGroup(pgid, 'SIGKILL'),
): () => void {
  live.set(pgid, { kind, kill })
  if (!hooked) {
    hooked = true
    process.once('exit', () => killSupervised())
  }
  return () => release(pgid)
}

/** Stop supervising the group led by `pgid` (it has ended, or its owner stopped it). */
export function release(pgid: number): void {
  live.delete(pgid)
}

/** The supervised groups (of one kind, or all), by leader pid. */
export function supervised(kind?: ProcessKind): number[] {
  return [...live].flatMap(([pgid, g]) => (kind === undefined || g.kind === kind ? [pgid] : []))
}

/**
 * Kill every supervised group (of one kind, or all) with its `kill`. Synchronous, so it can run
 * in an `exit` handler. Returns how many were killed; their owners still see them end and release them.
 */
export function killSupervised(kind?: ProcessKind): number {
  const kills = [...live.values()].filter((g) => kind === undefined || g.kind === kind).map((g) => g.kill)
  for (const kill of kills) kill()
  return kills.length
}

/** In a CLI entry: SIGINT / SIGTERM end the process through `exit`, so supervised groups are killed. */
export function exitOnSignals(): void {
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => process.exit(s === 'SIGINT' ? 130 : 143))
}
