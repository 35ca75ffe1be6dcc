/**
 * Targets run in process groups of their own (a wrapper's grandchildren go with them). Every
 * live group is registered here and killed when this process exits, so an interrupted kit run
 * (Ctrl-C: the CLI entries turn SIGINT/SIGTERM into an exit) leaves no target behind.
 */
import { signalGroup as signalPidGroup } from '../../server/process-group.ts'

const live = new Set<number>()
let hooked = false

/** Signal the process group led by `pid`; false when there is none or none of its processes is left. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  return pid !== undefined && signalPidGroup(pid, signal)
}

/** Track a group until {@link releaseGroup}; killed at exit if still tracked. */
export function trackGroup(pid: number | undefined): void {
  if (pid === undefined) return
  live.add(pid)
  if (!hooked) {
    hooked = true
    process.once('exit', () => {
      for (const p of live) signalGroup(p, 'SIGKILL')
    })
  }
}

/** Kill what is left of the group and stop tracking it. */
export function releaseGroup(pid: number | undefined): void {
  if (pid === undefined) return
  signalGroup(pid, 'SIGKILL')
  live.delete(pid)
}

/** In a CLI entry: SIGINT / SIGTERM end the process through `exit`, so tracked groups are killed. */
export function exitOnSignals(): void {
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => process.exit(s === 'SIGINT' ? 130 : 143))
}
