/**
 * The MCP server processes this process started and has not seen exit. Closing a server ends
 * its stdin, then SIGTERM, then SIGKILL to its process group (stdio-transport.ts); this set is
 * the last resort: when the process exits with servers still running (a crash path, a second
 * signal), each is killed synchronously in the `exit` hook, so no server outlives us.
 */
import { signalGroup } from '../process-group.ts'

const live = new Set<number>()
let hooked = false

function killAll(): void {
  // Each server's whole process group (stdio-transport.ts).
  for (const pid of live) signalGroup(pid, 'SIGKILL')
  live.clear()
}

/** Remember a started server process (until `forget`). */
export function track(pid: number): void {
  live.add(pid)
  if (!hooked) {
    hooked = true
    process.once('exit', killAll)
  }
}

export function forget(pid: number): void {
  live.delete(pid)
}

/** Pids of the MCP server processes still running (tests, diagnostics). */
export function livePids(): number[] {
  return [...live]
}
